"""The runtime's ingest endpoint, and the two live sockets: JSON frames for programs, HTML
fragments for the timeline page.

Ingest is a Channels HTTP consumer rather than a Django view (docs/timeline-live.md §4): a push is
a machine's bearer-token POST that needs none of Django's middleware, and through Django's ASGI
handler (its per-request thread and a dozen middlewares) each push cost 2.6 times the CPU.

A socket is a stream of the process's fan-out (fanout.py), which gathers each tick's events and
writes each audience's frames once (docs/timeline-live.md §4): the HTML socket always gets a tick's
events as one frame, the JSON socket one frame per event unless the client asks with ``?batch=1``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.http import AsyncHttpConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError

from access.caller import ANONYMOUS
from mobkit_console.observability import tracing
from mobkit_console.observability.logs import request_context_start
from mobkit_console.observability.middleware import REQUEST_ID_HEADER, request_id_for

from .fanout import process_fanout
from .ingest import IncomingEvent, IngestError, parse_ingest_body
from .models import TimelineEvent
from .named import texts_for
from .presentation import render_live_events, render_replay_unavailable
from .services import envelope_json, events_broadcast, events_prune_due, events_store, new_events
from .stream import ReplayUnavailable, Subscription, stream_filter

logger = logging.getLogger("mobkit_console.timeline")

UNAUTHENTICATED_CLOSE_CODE = 4401  # docs/wire-contract.md §C.1
# Ingest and the sockets need no channel of their own (the fan-out receives for the process): an
# alias with no layer configured gives them none (Channels' get_channel_layer answers None). With
# the default layer, Channels would subscribe a Redis channel per push and per socket, and a push
# would fail before storing anything while Redis is down.
NO_CHANNEL_LAYER = "timeline-consumers-need-no-channel"
REPLAY_FRAME_EVENTS = 200  # a batching socket's replay goes out in frames of at most this many


class IngestConsumer(AsyncHttpConsumer):
    """docs/timeline.md §T.7 ``POST /console/events``: 201 only once every event in the body is stored."""

    channel_layer_alias = NO_CHANNEL_LAYER

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.received = 0
        self.request_id: str | None = None

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels closes stale database connections in a worker thread before every handler; the
        # push's only database work runs in database_sync_to_async, which does that itself, so the
        # body skips that extra thread hop.
        if message["type"] == "http.request":
            await self.http_request(message)
        else:
            await super().dispatch(message)

    async def http_request(self, message: dict[str, Any]) -> None:
        # Refuse an oversized body as it arrives, before it is all held in memory.
        self.received += len(message.get("body", b""))
        if self.received > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            await self._answer(413, {"error": "too_large",
                                     "message": f"body: at most {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes"})
            raise StopConsumer()
        await super().http_request(message)

    async def handle(self, body: bytes) -> None:
        request_context_start(self._request_id())  # what the push logs carries its id (docs/serving.md §8)
        status, answer = await self._ingest(body)
        await self._answer(status, answer)

    def _request_id(self) -> str:
        """The push's ``X-Request-ID`` when sane, else one made here: as Django's requests have."""
        if self.request_id is None:
            sent = dict(self.scope.get("headers") or []).get(b"x-request-id")
            self.request_id = request_id_for(sent.decode("latin-1") if sent is not None else None)
        return self.request_id

    async def _ingest(self, body: bytes) -> tuple[int, dict[str, Any]]:
        if self.scope["method"] != "POST":
            return 405, {"error": "method_not_allowed", "message": "POST an event or an array of events"}
        expected = settings.MOBKIT_INGEST_TOKEN
        if not expected:
            return 403, {"error": "ingest_disabled",
                         "message": "event ingest is disabled: MOBKIT_INGEST_TOKEN is not set"}
        if not _ingest_token_ok(self.scope, expected):
            return 401, {"error": "unauthorized",
                         "message": "event ingest requires Authorization: Bearer <MOBKIT_INGEST_TOKEN>"}
        try:
            events = parse_ingest_body(body)
        except IngestError as error:
            return 400, {"error": "invalid_event", "message": str(error)}
        try:
            rows = await database_sync_to_async(_store_and_prune)(events)
        except DatabaseError:
            logger.exception("ingest: the console database failed while storing a push")
            return 503, {"error": "unavailable",
                         "message": "the console database failed while storing the events: push them again"
                                    " (an event with an event_id is stored once however often it is pushed)"}
        # One group message whatever the number of open sockets (fanout.py): not waiting on them. It
        # never fails the push: the events are stored, and a fan-out the message misses reads them
        # from the log (docs/timeline-live.md §4).
        await events_broadcast(new_events(rows))
        return 201, {"event_ids": [row.event_id for row in rows]}

    async def _answer(self, status: int, answer: dict[str, Any]) -> None:
        # What Django's SecurityMiddleware would add: a refusal quotes the pushed body, which a
        # browser must never sniff into HTML.
        headers = [(b"Content-Type", b"application/json"), (b"X-Content-Type-Options", b"nosniff"),
                   (b"Cache-Control", b"no-store"), (REQUEST_ID_HEADER.encode(), self._request_id().encode())]
        if status == 405:
            headers.append((b"Allow", b"POST"))
        if status == 503:
            headers.append((b"Retry-After", b"1"))
        await self.send_response(status, json.dumps(answer).encode("utf-8"), headers=headers)


def _ingest_token_ok(scope: dict[str, Any], expected: str) -> bool:
    header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
    scheme, _, presented = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(presented.strip().encode("latin-1"), expected.encode("utf-8"))


def _store_and_prune(events: list[IncomingEvent]) -> list[TimelineEvent]:
    rows = events_store(events=events)
    events_prune_due()
    return rows


class EventStreamConsumer(AsyncWebsocketConsumer):
    # A socket is sent its events by the fan-out, so the layer keeps one queue per process, not one
    # per open socket.
    channel_layer_alias = NO_CHANNEL_LAYER
    keep_alive_interval_s = 10.0  # docs/timeline.md §T.2: a keep-alive at least every 15 s
    batching = False
    stream_kind = "websocket"

    async def connect(self) -> None:
        caller = self.scope.get("caller", ANONYMOUS)
        if not caller.is_signed_in:
            # Accept first: a close before the handshake reaches the client as HTTP 403, not 4401.
            await self.accept()
            await self.close(code=UNAUTHENTICATED_CLOSE_CODE)
            return
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.subscription = Subscription(caller, stream_filter(query))
        self.batching = self.batching or (query.get("batch") or [""])[0] == "1"
        self.frame_kind = (type(self).__name__, self.batching)
        self.fanout = process_fanout()
        # A span for subscribing (and one for the replay within), never one for the socket's life.
        with tracing.span("timeline subscribe", {"mobkit.stream": type(self).__name__}):
            # Join before the replay reads the log: an event stored meanwhile is held, not lost.
            await self.fanout.join(self)
            await self.accept()
            after = (query.get("after") or [""])[0]
            if after:
                with tracing.span("timeline replay"):
                    await self._replay(after)
            await self.fanout.go_live(self)
        self._keep_alive = asyncio.create_task(self._keep_alive_loop())

    async def disconnect(self, code: int) -> None:
        task = getattr(self, "_keep_alive", None)
        if task is not None:
            task.cancel()
        if hasattr(self, "fanout"):
            await self.fanout.leave(self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Clients have nothing to say; anything they send is ignored."""

    async def frames(self, events: list[dict[str, Any]]) -> tuple[str, ...]:
        return await self.envelope_frames([event["envelope"] for event in events])

    async def send_frames(self, frames: tuple[str, ...]) -> None:
        for frame in frames:
            # base_send, not send: the same ASGI message without two coroutine layers per socket.
            await self.base_send({"type": "websocket.send", "text": frame})

    async def _replay(self, after: str) -> None:
        """Send every stored event after ``after`` the caller may see, before any live one."""
        try:
            async for chunk in self.subscription.replay(after):
                texts = [envelope_json(envelope) for envelope in chunk]
                for start in range(0, len(texts), REPLAY_FRAME_EVENTS):
                    await self.send_frames(await self.envelope_frames(texts[start:start + REPLAY_FRAME_EVENTS]))
        except ReplayUnavailable as gone:
            await self.send_replay_unavailable(gone.requested, gone.latest)

    async def _keep_alive_loop(self) -> None:
        while True:
            await asyncio.sleep(self.keep_alive_interval_s)
            await self.send_keep_alive()

    async def envelope_frames(self, envelopes: list[str]) -> tuple[str, ...]:
        """The frames for events (each its envelope as JSON text), oldest first."""
        raise NotImplementedError

    async def send_replay_unavailable(self, requested: str, latest: str | None) -> None:
        raise NotImplementedError

    async def send_keep_alive(self) -> None:
        raise NotImplementedError


class EventsConsumer(EventStreamConsumer):
    """``WS /ws/console/events/``: JSON frames (docs/timeline.md §T.2); ``?batch=1`` for batch frames."""

    async def envelope_frames(self, envelopes: list[str]) -> tuple[str, ...]:
        envelopes = await texts_for(envelopes, access=self.subscription.access())
        if self.batching:
            return ('{"type":"events","events":[' + ",".join(envelopes) + "]}",)
        return tuple('{"type":"event","event":' + envelope + "}" for envelope in envelopes)

    async def send_replay_unavailable(self, requested: str, latest: str | None) -> None:
        await self.send(text_data=json.dumps({"type": "replay_unavailable", "requested": requested, "latest": latest}))

    async def send_keep_alive(self) -> None:
        await self.send(text_data=json.dumps({"type": "keep_alive"}))


class TimelineConsumer(EventStreamConsumer):
    """``WS /ws/console/timeline/``: the same stream as out-of-band fragments for htmx's ws extension."""

    batching = True

    async def envelope_frames(self, envelopes: list[str]) -> tuple[str, ...]:
        # Titles are read from the realm files under this caller's access: a database read, off the loop.
        access = self.subscription.access()
        return (await database_sync_to_async(render_live_events)(envelopes, access=access),)

    async def send_replay_unavailable(self, requested: str, latest: str | None) -> None:
        await self.send(text_data=render_replay_unavailable(requested, latest))

    async def send_keep_alive(self) -> None:
        await self.send(text_data='<div id="timeline-heartbeat" hx-swap-oob="true" hidden></div>')
