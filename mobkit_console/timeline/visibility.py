"""Which part of a timeline event decides who receives it (docs/timeline.md §3.4).

Everything the decision reads is the event's *visibility key* (identity, scope kind, scope key):
events with one key are received by exactly the same callers, which is what lets a socket decide
each key once and the timeline count events per key (docs/timeline-live.md §6). The decision
itself is the memory domain's gate, ``memory_panel.visibility.event_visible``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_panel.visibility import event_visible

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


def envelope_visible(access: Access, envelope: dict[str, Any]) -> bool:
    """Does this caller receive this event?"""
    return key_visible(access, visibility_key(envelope["identity"], envelope.get("data")))


def key_visible(access: Access, key: VisibilityKey) -> bool:
    """Does this caller receive the events of ``key``?"""
    return event_visible(access, *key)
