"""``panel_alerts`` for the Holdings and Quarantine pages: the alerts about them that fire now
(docs/alerts.md §6). A context processor, so memory_panel, which knows nothing of alerts, only
shows a list when its host gives one."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from .selectors import firing_alerts

# Which conditions each panel answers for, by URL name.
PANEL_CONDITIONS = {
    "memory-quarantine": ("quarantine.arrived", "quarantine.queue.length", "quarantine.queue.oldest"),
    "memory-holdings": ("tile.violated", "scope.floor"),
}


def panel_alerts(request: HttpRequest) -> dict[str, Any]:
    match = getattr(request, "resolver_match", None)
    conditions = PANEL_CONDITIONS.get(match.url_name if match else "")
    if conditions is None or not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    # Rule ids and recipients are for the alerts page's readers; a panel says what fires and since when.
    return {"panel_alerts": firing_alerts(conditions=conditions)}
