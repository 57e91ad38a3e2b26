"""The timeline page and the event stream (SSE); ingest is consumers.IngestConsumer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from memory_panel.errors import InvalidParams
from memory_panel.views.render import panel_view, render_page, wants_fragment
from access.caller import Access
from mobkit_console.shell import memory_nav

from .events import EVENT_TYPES
from .fanout import process_fanout
from .models import EVENT_ID_PREFIX
from .named import texts_for
from .presentation import event_rows
from .selectors import START_OF_LOG, EventPage, events_page, events_page_count, latest_event_id, parse_event_id
from .sentences import type_words
from .services import envelope_json
from .stream import ReplayUnavailable, Subscription, stream_filter


def _error(status: int, error: str, message: str) -> JsonResponse:
    return JsonResponse({"error": error, "message": message}, status=status)


@panel_view
def timeline_page(request: HttpRequest, access: Access) -> HttpResponse:
    """The newest events (or, with ``?before=``, the page older than that event), newest first."""
    filters = stream_filter(request.GET)
    before = _before(request.GET.get("before", ""))
    # Read the frontier before the rows: the socket replays everything after it, so an event stored
    # while this page renders arrives live instead of being lost (timeline.js drops a repeat).
    latest = latest_event_id() if before is None else None
    page = events_page(access=access, filters=filters, before=before)
    query = {k: v for k, v in (("event_type", filters.event_type), ("identity", filters.identity)) if v}
    context = {
        "rows": event_rows(page.events, access=access),
        # "Load older" over htmx appends rows to a page that already shows the count (timeline.js keeps it).
        "count": None if wants_fragment(request) else events_page_count(
            access=access, filters=filters, before=before, newest_seq=_frontier(latest, page),
            shown=len(page.events),
        ),
        "filters": filters,
        "filtered": bool(query),
        "older_url": f"?{urlencode({**query, 'before': page.older})}" if page.older else None,
        "before": before,
        "newest_url": f"?{urlencode(query)}" if query else "?",
        "event_types": [(event_type, type_words(event_type)) for event_type in EVENT_TYPES],
        # An older page is history: only the newest page follows the live stream.
        "socket_url": None if before is not None else
        f"/ws/console/timeline/?{urlencode({**query, 'after': latest or START_OF_LOG})}",
        "login_url": f"{reverse('login')}?{urlencode({'next': request.get_full_path()})}",
        "memory_nav": memory_nav(access),
    }
    return render_page(request, "timeline/page.html", "timeline/_older.html", context)


def _frontier(latest: str | None, page: EventPage) -> int | None:
    """The newest event the page accounts for: the socket replays only what is after it."""
    newest = page.events[0]["event_id"] if page.events else None
    seqs = [parse_event_id(event_id) for event_id in (latest, newest) if event_id]
    return max((seq for seq in seqs if seq is not None), default=None)


def _before(raw: str) -> int | None:
    if not raw.strip():
        return None
    seq = parse_event_id(raw.strip())
    if seq is None:
        raise InvalidParams(f"before must be an event id like {EVENT_ID_PREFIX}42, not '{raw[:80]}'")
    return seq


# docs/timeline.md §T.4: a comment line at least every 15 s, so proxies and clients know the stream is alive.
SSE_KEEP_ALIVE_S = 10.0


@require_GET
async def event_stream(request: HttpRequest) -> HttpResponse:
    """docs/timeline.md §T.4 ``GET /console/events/stream``: the sockets' events as Server-Sent Events."""
    if not request.caller.is_signed_in:
        return _error(401, "unauthorized", "the event stream requires a signed-in session or a valid auth token")
    subscription = Subscription(request.caller, stream_filter(request.GET))
    # The EventSource protocol resends the last id it saw as Last-Event-ID; it wins over ?after=.
    after = request.headers.get("Last-Event-ID", "").strip() or request.GET.get("after", "").strip()
    response = StreamingHttpResponse(_sse(subscription, after), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a buffering proxy would hold events back
    return response


class _SseStream:
    """An SSE response as a stream of the process's fan-out: frames queue for the response body."""

    frame_kind = "sse"
    stream_kind = "sse"

    def __init__(self, subscription: Subscription) -> None:
        self.subscription = subscription
        self.queue: asyncio.Queue[str] = asyncio.Queue()

    async def frames(self, events: list[dict[str, Any]]) -> tuple[str, ...]:
        texts = await texts_for([event["envelope"] for event in events], access=self.subscription.access())
        return ("".join(_sse_event(f"{EVENT_ID_PREFIX}{event['seq']}", event["event_type"], text)
                        for event, text in zip(events, texts)),)

    async def send_frames(self, frames: tuple[str, ...]) -> None:
        for frame in frames:
            self.queue.put_nowait(frame)


async def _sse(subscription: Subscription, after: str) -> AsyncIterator[str]:
    stream = _SseStream(subscription)
    fanout = process_fanout()
    # Join before the replay, as the sockets do: an event stored meanwhile is held, not lost.
    await fanout.join(stream)
    try:
        yield ": connected\n\n"  # headers and a first byte at once, so a client knows it is subscribed
        if after:
            try:
                async for chunk in subscription.replay(after):
                    texts = await texts_for([envelope_json(envelope) for envelope in chunk],
                                            access=subscription.access())
                    yield "".join(_sse_event(envelope["event_id"], envelope["event_type"], text)
                                  for envelope, text in zip(chunk, texts))
            except ReplayUnavailable as gone:
                yield _sse_event(None, "replay_unavailable",
                                 json.dumps({"requested": gone.requested, "latest": gone.latest}))
        await fanout.go_live(stream)
        while True:
            try:
                yield await asyncio.wait_for(stream.queue.get(), SSE_KEEP_ALIVE_S)
            except TimeoutError:
                yield ": keep-alive\n\n"
    finally:
        # Django cancels this generator when the client goes away (ASGI http.disconnect).
        await fanout.leave(stream)


def _sse_event(event_id: str | None, event: str, data: str) -> str:
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {event}\ndata: {data}\n\n"
