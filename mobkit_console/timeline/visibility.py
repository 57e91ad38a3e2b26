"""Who receives which timeline event (docs/timeline.md §3.4, issue 5).

An event needs ``agent.view`` on its identity. ``_system`` is checked as an identity too, so an
unscoped ``agent.view`` or one with ``agents = ["*"]`` sees it (docs/timeline.md §3.4), while a rule naming other
agents does not. When its data names a record scope, the caller must also be able to read that scope, so a
terse event can never reveal that a scope the caller cannot read is being written.

Everything the decision reads is the event's *visibility key* (identity, scope kind, scope key):
events with one key are received by exactly the same callers, which is what lets a socket decide
each key once and the timeline count events per key (docs/timeline-live.md §6).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_panel.visibility import scope_visible

if TYPE_CHECKING:
    from access.caller import Access

# (identity, scope_kind, scope_key); both scope parts are None when the event names no scope.
VisibilityKey = tuple[str, str | None, str | None]


def visibility_key(identity: str, data: Any) -> VisibilityKey:
    """The event's visibility key: a scope counts only when both ``scope_kind`` and ``scope_key``
    are strings (docs/timeline.md §3.4), so anything else is no scope at all."""
    kind, key = (data.get("scope_kind"), data.get("scope_key")) if isinstance(data, dict) else (None, None)
    if isinstance(kind, str) and isinstance(key, str):
        return identity, kind, key
    return identity, None, None


def event_visible(access: Access, envelope: dict[str, Any]) -> bool:
    return key_visible(access, visibility_key(envelope["identity"], envelope.get("data")))


def key_visible(access: Access, key: VisibilityKey) -> bool:
    """Does this caller receive the events of ``key``?"""
    identity, scope_kind, scope_key = key
    if not access.enforced:
        return True
    if not access.allows("agent.view", identity):
        return False
    if scope_kind is not None and scope_key is not None:
        return scope_visible(access, scope_kind, scope_key)
    return True
