"""Who may see which memory row (spec console-panel-and-access §2.4, memory-store §5.5).

Pure functions of the caller's Access and the row's scope and status, so the RPC methods, the
HTML views and the timeline all decide the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_panel.records import MemoryRecord

if TYPE_CHECKING:
    from mobkit_console.access.caller import Access

REVIEW = "memory.quarantine.review"
SCOPE_READ_ACTION = {
    "identity": "agent.memory.read",
    "mob": "mob.memory.read",
    "operator": "operator.memory.read",
    "realm": "agent.memory.read",
}
READ_ACTIONS = ("agent.memory.read", "mob.memory.read", "operator.memory.read")


def scope_visible(access: Access, scope_kind: str, scope_key: str) -> bool:
    if not access.enforced:
        return True
    if scope_kind == "identity":
        return access.allows("agent.memory.read", scope_key) and access.allows("agent.view", scope_key)
    action = SCOPE_READ_ACTION.get(scope_kind)
    # Mob, operator and realm rows need a resource-less grant; an unknown kind is never visible.
    return action is not None and access.allows(action)


def reviewer_only(record: MemoryRecord) -> bool:
    """Quarantined rows and retired quarantine evidence (a tombstoned row that was ever quarantined)."""
    return record.status == "quarantined" or (record.status == "tombstoned" and record.ever_quarantined)


def record_visible(access: Access, record: MemoryRecord) -> bool:
    if not access.enforced:
        return True
    if reviewer_only(record) and not access.allows(REVIEW):
        return False
    return scope_visible(access, record.scope_kind, record.scope_key)


def record_denial_action(access: Access, record: MemoryRecord) -> str:
    """The action a denial names: review for reviewer-only rows, else the scope's read action."""
    if reviewer_only(record) and not access.allows(REVIEW):
        return REVIEW
    return SCOPE_READ_ACTION.get(record.scope_kind, "agent.memory.read")


def can_read_memory(access: Access) -> bool:
    """experience.memory.can_read: deliberately coarse (spec §5); each section still checks."""
    return not access.enforced or any(access.may_perform_anywhere(a) for a in READ_ACTIONS)


def can_review_quarantine(access: Access) -> bool:
    return not access.enforced or access.allows(REVIEW)


def can_read_realm_history(access: Access) -> bool:
    """Unscoped agent.memory.read: dreams, overview, proposals, injections, harvests, verdicts."""
    return not access.enforced or access.allows("agent.memory.read")
