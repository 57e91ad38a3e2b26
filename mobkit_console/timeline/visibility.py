"""Who receives which timeline event (docs/timeline.md §3.4, issue 5).

An event needs ``agent.view`` on its identity. ``_system`` is checked as an identity too, so an
unscoped ``agent.view`` or one with ``agents = ["*"]`` sees it (docs/timeline.md §3.4), while a rule naming other
agents does not. When its data names a record scope, the caller must also be able to read that scope, so a
terse event can never reveal that a scope the caller cannot read is being written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_panel.visibility import scope_visible

if TYPE_CHECKING:
    from mobkit_console.access.caller import Access


def event_visible(access: Access, envelope: dict[str, Any]) -> bool:
    data = envelope.get("data") or {}
    return visible_to(access, identity=envelope["identity"], scope_kind=data.get("scope_kind"),
                      scope_key=data.get("scope_key"))


def visible_to(access: Access, *, identity: str, scope_kind: Any, scope_key: Any) -> bool:
    if not access.enforced:
        return True
    if not access.allows("agent.view", identity):
        return False
    if isinstance(scope_kind, str) and isinstance(scope_key, str):
        return scope_visible(access, scope_kind, scope_key)
    return True
