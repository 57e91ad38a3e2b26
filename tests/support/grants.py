"""What each caller posture (tests/support/postures.py ``CALLERS``) grants, from the posture's
rules (docs/access.md §2.4) rather than the console's access code: the expectations of the RPC,
search and export posture tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.postures import SCOUT
from tests.support.rpc import denied
from tests.support.written import Written, reviewer_only


REVIEW = "memory.quarantine.review"
SCOPE_ACTION = {"identity": "agent.memory.read", "mob": "mob.memory.read", "operator": "operator.memory.read",
                "realm": "agent.memory.read"}


@dataclass(frozen=True)
class Grants:
    identities: frozenset[str] | None  # None: every identity (an unscoped agent.view + agent.memory.read)
    mob: bool
    operator: bool
    unscoped_read: bool  # resource-less agent.memory.read: realm rows and the realm-wide lists
    review: bool
    can_read: bool  # experience.memory.can_read (docs/ui.md §5)

    def scope_ok(self, kind: str, key: str) -> bool:
        if kind == "identity":
            return self.identities is None or key in self.identities
        return {"mob": self.mob, "operator": self.operator, "realm": self.unscoped_read}[kind]

    def sees(self, row: Written) -> bool:
        return self.scope_ok(row.scope_kind, row.scope_key) and (self.review or not reviewer_only(row))

    def denial(self, row: Written) -> dict:
        action = REVIEW if reviewer_only(row) and not self.review else SCOPE_ACTION[row.scope_kind]
        return denied(action, row.id)


EVERYTHING = Grants(None, True, True, True, True, True)
NOTHING: frozenset[str] = frozenset()
GRANTS = {
    "open": EVERYTHING,
    "admin": EVERYTHING,
    "reviewer": EVERYTHING,
    "reader": Grants(None, True, True, True, False, True),
    "partial": Grants(None, True, False, True, False, True),
    "scoped": Grants(frozenset({SCOUT}), False, False, False, False, True),
    "none": Grants(NOTHING, False, False, False, False, False),
    "bare_reviewer": Grants(NOTHING, False, False, False, True, False),
}
GRANTED_POSTURES = list(GRANTS)
