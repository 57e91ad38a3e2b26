"""``GET /console/replicas/health``: how current each replica realm's copy is, for a monitor (docs/replicas.md §5)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from access.caller import Access
from memory_panel.selectors.replicas import replica_lag
from memory_panel.views.render import panel_view


@panel_view
def replicas_health(request: HttpRequest, access: Access) -> JsonResponse:
    """200 when every copy is following, 503 when one is flagged, so a plain HTTP check alerts."""
    lags = replica_lag()
    stale = [lag.realm for lag in lags if lag.stale]
    return JsonResponse(
        {"ok": not stale, "stale": stale, "replicas": [lag.as_json() for lag in lags]},
        status=503 if stale else 200,
    )
