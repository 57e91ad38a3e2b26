"""Pipeline: how memory moves, PROPOSED → HELD → PENDING GATE → COMMITTED · QUARANTINED (docs/ui.md §4).

Real counts over the whole store, each limited to the target scopes the caller may read; the
quarantined count is a reviewer's only (docs/access.md §2.4), others get "no grant", never a zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_panel.errors import UnknownRealm
from memory_panel.selectors.holdings import realm_holdings
from memory_panel.store.realms import realm_alias
from memory_panel.store.rows import panel_realms, realm_cursor
from memory_panel.visibility import require_realm_history, scope_visible, sees_quarantined

if TYPE_CHECKING:
    from access.caller import Access


@dataclass(frozen=True)
class Conveyor:
    proposed: int  # proposals pending a dream verdict
    held: int  # proposals the steward held (a tainted accept outside mob scope, docs/store-format.md §7.2)
    pending_gate: int  # staged promotions waiting for the gate
    committed: int  # accepted proposals and committed promotions
    quarantined: int | None  # None: the caller may not review quarantine
    taints: dict[tuple[str, str], str]  # (realm, proposal_id) → the propose-time taint of waiting proposals
    realms: list[str]


def pipeline_conveyor(*, access: Access, realm: str | None) -> Conveyor:
    require_realm_history(access)
    realms = panel_realms(realm)
    counts = {"pending": 0, "held": 0, "accepted": 0, "gate": 0, "committed": 0}
    quarantined = 0
    taints: dict[tuple[str, str], str] = {}
    for name in realms:
        try:
            realm_alias(name)
        except UnknownRealm:
            continue
        cursor = realm_cursor(name)
        for kind, key, status, count in cursor.execute(
            "SELECT scope_kind, scope_key, status, COUNT(*) FROM proposals GROUP BY 1, 2, 3"
        ).fetchall():
            if status in counts and scope_visible(access, kind, key):
                counts[status] += count
        for kind, key, status, count in cursor.execute(
            "SELECT scope_kind, scope_key, status, COUNT(*) FROM pending_promotions GROUP BY 1, 2, 3"
        ).fetchall():
            if status in ("pending", "committed") and scope_visible(access, kind, key):
                counts["gate" if status == "pending" else "committed"] += count
        for proposal_id, kind, key, taint in cursor.execute(
            "SELECT proposal_id, scope_kind, scope_key, taint FROM proposals"
            " WHERE taint IS NOT NULL AND status IN ('pending', 'held')"
        ).fetchall():
            if scope_visible(access, kind, key):
                taints[(name, proposal_id)] = taint
        quarantined += sum(s.quarantined for s in realm_holdings(name, with_quarantined=sees_quarantined(access)) if scope_visible(access, s.scope_kind, s.scope_key))
    return Conveyor(
        proposed=counts["pending"],
        held=counts["held"],
        pending_gate=counts["gate"],
        committed=counts["accepted"] + counts["committed"],
        quarantined=quarantined if sees_quarantined(access) else None,
        taints=taints,
        realms=realms,
    )
