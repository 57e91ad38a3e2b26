"""Every access gate of the memory domain (docs/access.md §2.4, docs/store-format.md §5.5).

Pure functions of the caller's Access and plain values, so the JSON-RPC methods, the HTML pages,
the exports and the timeline all decide the same way. ``may_*``/``*_visible`` answer a question;
``require_*`` raise ``AccessDenied`` naming the action MobKit names.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from typing import TYPE_CHECKING

from memory_panel.errors import AccessDenied

if TYPE_CHECKING:
    from memory_panel.store.records import MemoryRecord
    from access.caller import Access

REVIEW = "memory.quarantine.review"
AGENT_READ = "agent.memory.read"
AGENT_VIEW = "agent.view"
SCOPE_READ_ACTION = {
    "identity": AGENT_READ,
    "mob": "mob.memory.read",
    "operator": "operator.memory.read",
    "realm": AGENT_READ,
}
READ_ACTIONS = (AGENT_READ, "mob.memory.read", "operator.memory.read")
# Scope kinds whose rows need a resource-less grant: no per-key grant can reveal them.
_RESOURCE_LESS = (("mob", "mob.memory.read"), ("operator", "operator.memory.read"), ("realm", AGENT_READ))


# ---------------------------------------------------------------------------------------------
# Rows


# One check a row needs: an action, on an agent identity or resource-less (None).
Grant = tuple[str, str | None]


def scope_grants(scope_kind: str, scope_key: str) -> tuple[Grant, ...]:
    """Every check a row of this scope needs, in the order they are asked (docs/access.md §2.4).

    The explainer shows this chain (docs/access.md §2.9), so what it explains is what is checked.
    """
    if scope_kind == "identity":
        return ((AGENT_READ, scope_key), (AGENT_VIEW, scope_key))
    # Mob, operator and realm rows need a resource-less grant.
    return tuple((action, None) for action in _scope_actions(scope_kind))


def record_grants(record: MemoryRecord) -> tuple[Grant, ...]:
    """``scope_grants`` and, for a reviewer-only row, resource-less review first."""
    review: tuple[Grant, ...] = ((REVIEW, None),) if reviewer_only(record) else ()
    return review + scope_grants(record.scope_kind, record.scope_key)


def scope_visible(access: Access, scope_kind: str, scope_key: str) -> bool:
    if not access.enforced:
        return True
    return all(access.allows(action, identity) for action, identity in scope_grants(scope_kind, scope_key))


def _scope_actions(scope_kind: str) -> tuple[str, ...]:
    # docs/access.md §2.8: a kind MobKit does not define (a hand edit, a newer runtime) needs every
    # resource-less read grant, so a caller who may read every known scope may read it too.
    action = SCOPE_READ_ACTION.get(scope_kind)
    return (action,) if action is not None else READ_ACTIONS


def scope_checker(access: Access) -> Callable[[str, str], bool]:
    """``scope_visible`` for this caller, each distinct scope evaluated once per request."""
    if not access.enforced:
        return lambda scope_kind, scope_key: True
    return cache(partial(scope_visible, access))


def hidden_scope_kinds(access: Access) -> tuple[str, ...]:
    """Scope kinds no grant of this caller could reveal, excluded before rows are read."""
    if not access.enforced:
        return ()
    return tuple(kind for kind, action in _RESOURCE_LESS if not access.allows(action))


def scope_kind_readable(access: Access, kind: str) -> bool:
    """Could any scope of this kind be visible? Identity scopes need a grant on some agent."""
    if kind == "identity":
        return not access.enforced or (
            access.may_perform_anywhere(AGENT_READ) and access.may_perform_anywhere(AGENT_VIEW)
        )
    return scope_visible(access, kind, "")


def reviewer_only(record: MemoryRecord) -> bool:
    """Quarantined rows and retired quarantine evidence (a tombstoned row that was ever quarantined)."""
    return status_reviewer_only(record.status, record.ever_quarantined)


def status_reviewer_only(status: str, ever_quarantined: bool) -> bool:
    """``reviewer_only`` of a row known by its status and flag alone (a status at a moment, docs/history.md §4)."""
    return status == "quarantined" or (status == "tombstoned" and bool(ever_quarantined))


def row_checker(access: Access) -> Callable[[str, str, str, bool], bool]:
    """``record_visible`` for this caller over plain values (scope kind, scope key, status,
    ever_quarantined), each distinct scope evaluated once: for walking many rows undecoded."""
    scope_ok, reviewer = scope_checker(access), sees_quarantined(access)
    return lambda kind, key, status, ever: (reviewer or not status_reviewer_only(status, ever)) and scope_ok(kind, key)


def sees_quarantined(access: Access) -> bool:
    return not access.enforced or access.allows(REVIEW)


def record_visible(access: Access, record: MemoryRecord) -> bool:
    if not access.enforced:
        return True
    return all(access.allows(action, identity) for action, identity in record_grants(record))


def record_denial_action(access: Access, record: MemoryRecord) -> str:
    """The action a denial names: review for reviewer-only rows, else the scope's read action."""
    if reviewer_only(record) and not access.allows(REVIEW):
        return REVIEW
    action = SCOPE_READ_ACTION.get(record.scope_kind)
    if action is not None:
        return action
    return next((a for a in READ_ACTIONS if not access.allows(a)), AGENT_READ)


def tile_status_counted(access: Access, status_kind: str) -> bool:
    """Do a verdict tile's facts and its "checked N records" count rows of this status? (docs/panel-tiles.md)

    Neither a tile fact nor a scope's holdings carries ``ever_quarantined``, so without review
    every quarantined or tombstoned row counts as possibly reviewer-only: a reader is never told
    how many rows it may not see, and never told it checked them.
    """
    return status_kind not in ("quarantined", "tombstoned") or sees_quarantined(access)


def tile_fact_visible(access: Access, scope_kind: str, scope_key: str, status_kind: str) -> bool:
    """A verdict tile counts a flagged row only where its caller could open it (docs/panel-tiles.md)."""
    return tile_status_counted(access, status_kind) and scope_visible(access, scope_kind, scope_key)


def identity_visible(access: Access, identity: str) -> bool:
    """Realm-wide rows about one agent (injections, harvests): read and view on that identity.

    docs/access.md §2.8: such a row is the agent's memory activity (the records it was given, its
    session keys), so it follows the agent's identity-scope rule, not ``agent.view`` alone.
    """
    return scope_visible(access, "identity", identity)


def event_visible(access: Access, identity: str, scope_kind: str | None, scope_key: str | None) -> bool:
    """A timeline event, by its visibility key (docs/timeline.md §3.4).

    ``agent.view`` on the event's identity (``_system`` is checked as an identity too, so only an
    unscoped grant or ``agents = ["*"]`` sees it) and, when the event names a record scope, read
    access to that scope: a terse event never reveals that a scope the caller cannot read is
    being written.
    """
    if not access.enforced:
        return True
    if not access.allows(AGENT_VIEW, identity):
        return False
    return scope_kind is None or scope_key is None or scope_visible(access, scope_kind, scope_key)


def promotion_visible(access: Access, scope_kind: str, scope_key: str) -> bool:
    """A pending promotion row, judged by its target scope; an unknown target kind is denied (§2.4)."""
    return (not access.enforced or scope_kind in SCOPE_READ_ACTION) and scope_visible(access, scope_kind, scope_key)


# ---------------------------------------------------------------------------------------------
# Sections and methods


def can_read_memory(access: Access) -> bool:
    """experience.memory.can_read: deliberately coarse (docs/ui.md §5); each section still checks."""
    return not access.enforced or any(access.may_perform_anywhere(a) for a in READ_ACTIONS)


def can_review_quarantine(access: Access) -> bool:
    return sees_quarantined(access)


def can_read_realm_history(access: Access) -> bool:
    """Unscoped agent.memory.read: dreams, overview, proposals, injections, harvests, verdicts."""
    return not access.enforced or access.allows(AGENT_READ)


def may_read_ledger(access: Access) -> bool:
    """The operational ledger is realm-less: an unscoped ``agent.memory.read`` (docs/runtime-surfaces.md §1.1)."""
    return access.allows(AGENT_READ)


def require_realm_history(access: Access) -> None:
    if not can_read_realm_history(access):
        raise AccessDenied(AGENT_READ, None)


def require_review(access: Access) -> None:
    if not sees_quarantined(access):
        raise AccessDenied(REVIEW, None)


def require_ledger(access: Access) -> None:
    if not may_read_ledger(access):
        raise AccessDenied(AGENT_READ, None)


def require_identity_memory(access: Access, identity: str) -> None:
    """One agent's own records (recall preview, legacy files): read and view on that identity."""
    if not scope_visible(access, "identity", identity):
        raise AccessDenied(AGENT_READ, identity)


def require_record_list(access: Access, *, scope_kind: str | None, scope_key: str | None) -> None:
    """docs/wire-contract.md §1.2 (a): the records entry gates, before any row is read."""
    if not access.enforced:
        return
    if scope_kind in ("mob", "operator") and not access.allows(SCOPE_READ_ACTION[scope_kind]):
        raise AccessDenied(SCOPE_READ_ACTION[scope_kind], None)
    if scope_kind == "identity" and scope_key is not None:
        for action in (AGENT_READ, AGENT_VIEW):
            if not access.allows(action, scope_key):
                raise AccessDenied(action, scope_key)
