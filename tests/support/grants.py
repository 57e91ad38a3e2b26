"""What each caller posture (tests/support/postures.py ``CALLERS``) grants, for the search and export tests.

The same account of the rules as tests/rpc/test_access_postures.py's grant table (docs/access.md
§2.4), kept here so those tests need not import a test module.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.postures import SCOUT
from tests.support.written import Written, reviewer_only


@dataclass(frozen=True)
class Grants:
    identities: frozenset[str] | None  # None: every identity (an unscoped agent.view + agent.memory.read)
    mob: bool
    operator: bool
    unscoped_read: bool  # resource-less agent.memory.read: realm rows and the realm-wide lists
    review: bool

    def scope_ok(self, kind: str, key: str) -> bool:
        if kind == "identity":
            return self.identities is None or key in self.identities
        return {"mob": self.mob, "operator": self.operator, "realm": self.unscoped_read}[kind]

    def sees(self, row: Written) -> bool:
        return self.scope_ok(row.scope_kind, row.scope_key) and (self.review or not reviewer_only(row))


EVERYTHING = Grants(None, True, True, True, True)
GRANTS = {
    "open": EVERYTHING,
    "admin": EVERYTHING,
    "reviewer": EVERYTHING,
    "reader": Grants(None, True, True, True, False),
    "partial": Grants(None, True, False, True, False),
    "scoped": Grants(frozenset({SCOUT}), False, False, False, False),
    "none": Grants(frozenset(), False, False, False, False),
    "bare_reviewer": Grants(frozenset(), False, False, False, True),
}
GRANTED_POSTURES = list(GRANTS)
