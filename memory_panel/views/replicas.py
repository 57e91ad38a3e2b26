"""``GET /console/replicas/health``: how current each replica realm's copy is, for a monitor (docs/replicas.md §5)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from access.caller import Access
from memory_panel.selectors.replicas import replica_health
from memory_panel.views.render import panel_view


@panel_view
def replicas_health(request: HttpRequest, access: Access) -> JsonResponse:
    """200 when every copy is following and every source listed, 503 when one is flagged, so a
    plain HTTP check alerts."""
    health = replica_health()
    return JsonResponse(
        {"ok": health.ok, "stale": health.stale, "replicas": [lag.as_json() for lag in health.lags],
         "source_problems": [{"label": source.label, "problem": source.problem} for source in health.sources]},
        status=200 if health.ok else 503,
    )
