"""Pipeline: how memory moves, PROPOSED → HELD → PENDING GATE → COMMITTED · QUARANTINED (docs/ui.md §4).

Real counts over the whole store, each limited to the target scopes the caller may read; the
quarantined count is a reviewer's only (docs/access.md §2.4), others get "no grant", never a zero.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_panel.selectors.holdings import realm_holdings
from memory_panel.store.rows import realm_cursor, realm_rows
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


# Proposal statuses the conveyor counts under their own name.
_PROPOSAL_COUNTED = ("pending", "held", "accepted", "gate", "committed")


def pipeline_conveyor(*, access: Access, realm: str | None) -> Conveyor:
    require_realm_history(access)
    # One realm's counts at a time, so a realm that cannot be read adds nothing (docs/realm-failures.md §1).
    parts, realms = realm_rows(realm, lambda name: [_realm_counts(access, name)])
    counts: Counter[str] = Counter()
    taints: dict[tuple[str, str], str] = {}
    for part_counts, part_taints in parts:
        counts.update(part_counts)
        taints.update(part_taints)
    return Conveyor(
        proposed=counts["pending"],
        held=counts["held"],
        pending_gate=counts["gate"],
        committed=counts["accepted"] + counts["committed"],
        quarantined=counts["quarantined"] if sees_quarantined(access) else None,
        taints=taints,
        realms=realms,
    )


def _realm_counts(access: Access, name: str) -> tuple[Counter[str], dict[tuple[str, str], str]]:
    """One realm's conveyor counts and waiting taints, within the target scopes the caller may read."""
    counts: Counter[str] = Counter()
    taints: dict[tuple[str, str], str] = {}
    cursor = realm_cursor(name)
    for kind, key, status, count in cursor.execute(
        "SELECT scope_kind, scope_key, status, COUNT(*) FROM proposals GROUP BY 1, 2, 3"
    ).fetchall():
        if status in _PROPOSAL_COUNTED and scope_visible(access, kind, key):
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
    holdings = realm_holdings(name, with_quarantined=sees_quarantined(access))
    counts["quarantined"] = sum(s.quarantined for s in holdings if scope_visible(access, s.scope_kind, s.scope_key))
    return counts, taints
