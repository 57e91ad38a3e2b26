"""The ingest endpoint for the runtime and the live timeline page."""

from __future__ import annotations

import hmac
from urllib.parse import urlencode

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from mobkit_console.access.caller import access_for_user
from memory_panel.views.render import render_page
from mobkit_console.shell import memory_nav

from .events import EVENT_TYPES
from .ingest import IncomingEvent, IngestError, parse_ingest_body
from .models import TimelineEvent
from .presentation import event_row
from .selectors import START_OF_LOG, EventFilter, latest_event_id, recent_events
from .services import events_broadcast, events_prune_due, events_store, new_events


def _error(status: int, error: str, message: str) -> JsonResponse:
    return JsonResponse({"error": error, "message": message}, status=status)


def _ingest_token_ok(request: HttpRequest, expected: str) -> bool:
    scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(presented.strip().encode("utf-8"), expected.encode("utf-8"))


@csrf_exempt
@require_POST
async def ingest_events(request: HttpRequest) -> JsonResponse:
    """docs/timeline.md §T.7 ``POST /console/events``: 2xx only once every event in the body is stored."""
    expected = settings.MOBKIT_INGEST_TOKEN
    if not expected:
        return _error(403, "ingest_disabled", "event ingest is disabled: MOBKIT_INGEST_TOKEN is not set")
    if not _ingest_token_ok(request, expected):
        return _error(401, "unauthorized", "event ingest requires Authorization: Bearer <MOBKIT_INGEST_TOKEN>")
    try:
        events = parse_ingest_body(request.body)
    except RequestDataTooBig:
        return _error(413, "too_large", f"body: at most {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes")
    except IngestError as error:
        return _error(400, "invalid_event", str(error))
    rows = await database_sync_to_async(_store_and_prune)(events)
    await events_broadcast(new_events(rows))
    return JsonResponse({"event_ids": [row.event_id for row in rows]}, status=201)


def _store_and_prune(events: list[IncomingEvent]) -> list[TimelineEvent]:
    rows = events_store(events=events)
    events_prune_due()
    return rows


def _page_filters(request: HttpRequest) -> EventFilter:
    event_type = request.GET.get("event_type", "").strip()
    identity = request.GET.get("identity", "").strip()
    return EventFilter(
        event_type=event_type if event_type in EVENT_TYPES else None,
        identity=identity or None,
    )


@login_required
@require_GET
def timeline_page(request: HttpRequest) -> HttpResponse:
    access = access_for_user(request.user)
    filters = _page_filters(request)
    # Read the frontier before the rows: the socket replays everything after it, so an event stored
    # while this page renders arrives live instead of being lost (timeline.js drops a repeat).
    latest = latest_event_id()
    rows = [event_row(envelope) for envelope in recent_events(access=access, filters=filters)]
    query = {k: v for k, v in (("event_type", filters.event_type), ("identity", filters.identity)) if v}
    query["after"] = latest or START_OF_LOG
    context = {
        "rows": rows,
        "filters": filters,
        "event_types": EVENT_TYPES,
        "socket_url": f"/ws/console/timeline/?{urlencode(query)}",
        "memory_nav": memory_nav(access),
    }
    return render_page(request, "timeline/page.html", "timeline/_events.html", context)
