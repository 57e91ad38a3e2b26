"""The two live sockets: JSON frames for programs, HTML fragments for the timeline page.

Every socket joins one channel-layer group; the ingest view and the realm watcher store an event
and send it to the group once, and each socket decides for its own caller whether to pass it on.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from mobkit_console.access.caller import Access, access_for_subject, subject_for_user

from .events import EVENT_TYPES
from .presentation import render_live_event, render_replay_unavailable
from .selectors import EventFilter, events_after, latest_event_id, parse_event_id, replay_start
from .services import EVENT_MESSAGE_TYPE, TIMELINE_GROUP
from .visibility import event_visible, visible_to

UNAUTHENTICATED_CLOSE_CODE = 4401  # docs/wire-contract.md §C.1
# Re-read the caller's grants this often, so an access.toml edit reaches open sockets well within
# the contract's 5 s (the config file itself is re-checked about once a second).
ACCESS_REFRESH_S = 1.0


class EventStreamConsumer(AsyncWebsocketConsumer):
    keep_alive_interval_s = 10.0  # docs/timeline.md §T.2: a keep-alive at least every 15 s

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            # Accept first: a close before the handshake reaches the client as HTTP 403, not 4401.
            await self.accept()
            await self.close(code=UNAUTHENTICATED_CLOSE_CODE)
            return
        self.subject = subject_for_user(user)
        self._access = access_for_subject(self.subject)
        self._access_at = time.monotonic()
        # Decisions of visible_to under self._access, by (identity, scope_kind, scope_key): a
        # stream carries few distinct keys, and evaluating the rules per frame was per-socket work.
        # Dropped whenever the Access is re-read, so a revocation still lands within a second.
        self._visible: dict[tuple[str, str | None, str | None], bool] = {}
        # Live events at or below this were sent by the replay. Nothing else is skipped: two
        # processes may store 11 and 10 and send them in that order, and both must arrive.
        self.replayed_upto = 0
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.filters = _filters(query)
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
        if hasattr(self, "filters"):
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
        if message["seq"] <= self.replayed_upto:
            return
        if self.filters.matches(event_type=message["event_type"], identity=message["identity"]) and self._may_see(
            message["identity"], message["scope_kind"], message["scope_key"],
        ):
            await self.send_frame(message["frame"])

    def _may_see(self, identity: str, scope_kind: str | None, scope_key: str | None) -> bool:
        access = self.access()
        key = (identity, scope_kind, scope_key)
        visible = self._visible.get(key)
        if visible is None:
            visible = self._visible[key] = visible_to(
                access, identity=identity, scope_kind=scope_kind, scope_key=scope_key)
        return visible

    def access(self) -> Access:
        now = time.monotonic()
        if now - self._access_at >= ACCESS_REFRESH_S:
            self._access = access_for_subject(self.subject)
            self._access_at = now
            self._visible.clear()
        return self._access

    async def _replay(self, after: str) -> None:
        """Send every stored event after ``after`` the caller may see, before any live one."""
        start = await database_sync_to_async(replay_start)(after=after)
        if start is None:
            latest = await database_sync_to_async(latest_event_id)()
            await self.send_replay_unavailable(after, latest)
            return
        self.replayed_upto = start
        while True:
            chunk = await database_sync_to_async(events_after)(after_seq=self.replayed_upto)
            for envelope in chunk:
                self.replayed_upto = parse_event_id(envelope["event_id"]) or self.replayed_upto
                if self.filters.matches(event_type=envelope["event_type"], identity=envelope["identity"]) \
                        and event_visible(self.access(), envelope):
                    await self.send_frame(json.dumps({"type": "event", "event": envelope}, separators=(",", ":")))
            if not chunk:
                return

    async def _keep_alive_loop(self) -> None:
        while True:
            await asyncio.sleep(self.keep_alive_interval_s)
            await self.send_keep_alive()

    async def send_frame(self, frame: str) -> None:
        """Send one event, given its JSON frame ``{"type":"event","event":…}``."""
        raise NotImplementedError

    async def send_replay_unavailable(self, requested: str, latest: str | None) -> None:
        raise NotImplementedError

    async def send_keep_alive(self) -> None:
        raise NotImplementedError


class EventsConsumer(EventStreamConsumer):
    """``WS /ws/console/events/``: JSON frames (docs/timeline.md §T.2)."""

    async def send_frame(self, frame: str) -> None:
        await self.send(text_data=frame)

    async def send_replay_unavailable(self, requested: str, latest: str | None) -> None:
        await self.send(text_data=json.dumps({"type": "replay_unavailable", "requested": requested, "latest": latest}))

    async def send_keep_alive(self) -> None:
        await self.send(text_data=json.dumps({"type": "keep_alive"}))


class TimelineConsumer(EventStreamConsumer):
    """``WS /ws/console/timeline/``: the same stream as out-of-band fragments for htmx's ws extension."""

    async def send_frame(self, frame: str) -> None:
        await self.send(text_data=render_live_event(json.loads(frame)["event"]))

    async def send_replay_unavailable(self, requested: str, latest: str | None) -> None:
        await self.send(text_data=render_replay_unavailable(requested, latest))

    async def send_keep_alive(self) -> None:
        await self.send(text_data='<div id="timeline-heartbeat" hx-swap-oob="true" hidden></div>')


def _filters(query: dict[str, list[str]]) -> EventFilter:
    event_type = (query.get("event_type") or [""])[0]
    identity = (query.get("identity") or [""])[0].strip()
    return EventFilter(event_type=event_type if event_type in EVENT_TYPES else None, identity=identity or None)
