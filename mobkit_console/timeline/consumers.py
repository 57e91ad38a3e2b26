"""The two live sockets: JSON frames for programs, HTML fragments for the timeline page.

Every socket joins one channel-layer group; the ingest view and the realm follower store an event
and send it to the group once, and each socket's Subscription decides for its own caller whether to
pass it on. What arrives within one short tick can go out as one frame (docs/timeline-live.md §4):
always on the HTML socket, on the JSON socket when the client asks with ``?batch=1``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer

from mobkit_console.access.caller import subject_for_user

from .presentation import render_live_events, render_replay_unavailable
from .services import EVENT_MESSAGE_TYPE, TIMELINE_GROUP, envelope_json
from .stream import ReplayUnavailable, Subscription, stream_filter

UNAUTHENTICATED_CLOSE_CODE = 4401  # docs/wire-contract.md §C.1
# How long a batching socket gathers events before sending them as one frame: short beside the
# 100 ms delivery target, long enough that a burst of events costs one socket write, not one each.
BATCH_TICK_S = 0.02
REPLAY_FRAME_EVENTS = 200  # a batching socket's replay goes out in frames of at most this many


class EventStreamConsumer(AsyncWebsocketConsumer):
    keep_alive_interval_s = 10.0  # docs/timeline.md §T.2: a keep-alive at least every 15 s
    batching = False

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            # Accept first: a close before the handshake reaches the client as HTTP 403, not 4401.
            await self.accept()
            await self.close(code=UNAUTHENTICATED_CLOSE_CODE)
            return
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.subscription = Subscription(subject_for_user(user), stream_filter(query))
        self.batching = self.batching or (query.get("batch") or [""])[0] == "1"
        self._pending: list[str] = []  # envelope JSON gathered for the next batched frame
        self._flush_at: asyncio.TimerHandle | None = None
        await self.channel_layer.group_add(TIMELINE_GROUP, self.channel_name)
        await self.accept()
        after = (query.get("after") or [""])[0]
        if after:
            await self._replay(after)
        self._keep_alive = asyncio.create_task(self._keep_alive_loop())

    async def disconnect(self, code: int) -> None:
        task = getattr(self, "_keep_alive", None)
        if task is not None:
            task.cancel()
        if getattr(self, "_flush_at", None) is not None:
            self._flush_at.cancel()
        if hasattr(self, "subscription"):
            await self.channel_layer.group_discard(TIMELINE_GROUP, self.channel_name)

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels runs close_old_connections in a worker thread before every handler; for a group
        # event that thread hop per socket was most of the fan-out's cost (one event = 100 hops at
        # 100 sockets). timeline_event never touches the database, so it is called directly.
        if message["type"] == EVENT_MESSAGE_TYPE:
            await self.timeline_event(message)
        else:
            await super().dispatch(message)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Clients have nothing to say; anything they send is ignored."""

    async def timeline_event(self, message: dict[str, Any]) -> None:
        if not self.subscription.wants(message):
            return
        if not self.batching:
            await self.send_events([message["envelope"]])
            return
        self._pending.append(message["envelope"])
        if self._flush_at is None:
            self._flush_at = asyncio.get_running_loop().call_later(
                BATCH_TICK_S, lambda: asyncio.ensure_future(self._flush()))

    async def _flush(self) -> None:
        self._flush_at = None
        pending, self._pending = self._pending, []
        if pending:
            await self.send_events(pending)

    async def _replay(self, after: str) -> None:
        """Send every stored event after ``after`` the caller may see, before any live one."""
        chunk: list[str] = []
        try:
            async for envelope in self.subscription.replay(after):
                chunk.append(envelope_json(envelope))
                if not self.batching or len(chunk) >= REPLAY_FRAME_EVENTS:
                    await self.send_events(chunk)
                    chunk = []
        except ReplayUnavailable as gone:
            await self.send_replay_unavailable(gone.requested, gone.latest)
            return
        if chunk:
            await self.send_events(chunk)

    async def _keep_alive_loop(self) -> None:
        while True:
            await asyncio.sleep(self.keep_alive_interval_s)
            await self.send_keep_alive()

    async def send_events(self, envelopes: list[str]) -> None:
        """Send events (each its envelope as JSON text), oldest first, as one frame."""
        raise NotImplementedError

    async def send_replay_unavailable(self, requested: str, latest: str | None) -> None:
        raise NotImplementedError

    async def send_keep_alive(self) -> None:
        raise NotImplementedError


class EventsConsumer(EventStreamConsumer):
    """``WS /ws/console/events/``: JSON frames (docs/timeline.md §T.2); ``?batch=1`` for batch frames."""

    async def send_events(self, envelopes: list[str]) -> None:
        # The envelopes are serialized once per event for every socket; only the frame is built here.
        if self.batching:
            await self.send(text_data='{"type":"events","events":[' + ",".join(envelopes) + "]}")
        else:
            for envelope in envelopes:
                await self.send(text_data='{"type":"event","event":' + envelope + "}")

    async def send_replay_unavailable(self, requested: str, latest: str | None) -> None:
        await self.send(text_data=json.dumps({"type": "replay_unavailable", "requested": requested, "latest": latest}))

    async def send_keep_alive(self) -> None:
        await self.send(text_data=json.dumps({"type": "keep_alive"}))


class TimelineConsumer(EventStreamConsumer):
    """``WS /ws/console/timeline/``: the same stream as out-of-band fragments for htmx's ws extension."""

    batching = True

    async def send_events(self, envelopes: list[str]) -> None:
        await self.send(text_data=render_live_events(envelopes))

    async def send_replay_unavailable(self, requested: str, latest: str | None) -> None:
        await self.send(text_data=render_replay_unavailable(requested, latest))

    async def send_keep_alive(self) -> None:
        await self.send(text_data='<div id="timeline-heartbeat" hx-swap-oob="true" hidden></div>')
