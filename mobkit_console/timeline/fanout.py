"""One timeline subscriber per server process, fanning each tick's events out to its open streams.

The channel layer carries each stored batch of events once per process (docs/timeline-live.md §4):
this module's ``Fanout`` is the process's only member of the timeline group. It gathers what
arrives within one short tick, decides once per audience (a caller and their filters) which of
those events that audience receives, builds each kind of frame once per audience, and writes it to
every socket or SSE stream of that audience. With 100 sockets of one operator, an event costs one
visibility decision and one frame, not a hundred of each; the layer holds one queue per process,
not one per socket, so a burst of events cannot overflow a socket's queue and be lost.

A stream joins before it replays the log and goes live after: what arrives meanwhile is held for
it and sent after the replay, minus what the replay already sent, so nothing is lost, repeated or
sent out of order.

The layer is how events arrive quickly, not what makes them arrive (docs/timeline-live.md §4): Redis
pub/sub drops what is published while it, or this process's connection to it, is down. So the
fan-out also sweeps the log itself, twice a second: an event stored that the layer has not brought
within a second is read from the log and sent like one that came by the layer, once.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from collections.abc import Hashable
from typing import Any, Protocol

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from mobkit_console.observability import metrics

from .selectors import event_seqs_after, events_by_seq, latest_seq
from .services import EVENTS_MESSAGE_TYPE, TIMELINE_GROUP, live_event
from .stream import Subscription

logger = logging.getLogger("mobkit_console.timeline")

# How long the fan-out gathers events before sending them; an event after a quiet spell goes out at
# once. Measured (bench/timeline_fanout.py, 100 sockets, 200 events/s, one process): with 20 ms the
# writes left the process CPU-bound at 154 events/s; with 50 ms it keeps up, p99 under 100 ms.
TICK_S = 0.05
# Writing a frame to a socket costs tens of microseconds (Twisted, autobahn): a tick to a thousand
# sockets yields to the loop this often, so requests are not held up for the whole tick.
YIELD_EVERY = 100
# The in-memory layer forgets a group member after a day (its group_expiry); renewing the membership
# hourly keeps a long-lived process subscribed.
REJOIN_EVERY_S = 3600.0
RETRY_AFTER_S = 1.0
RETRY_MAX_S = 16.0
# The sweep (docs/timeline-live.md §4): how often it reads the log's new seqs, how long an event it
# found there may take to come by the layer before it is sent from the log, and how long a seq
# missing below a stored one is waited for (a PostgreSQL insert commits after a later one; SQLite
# numbers in commit order, so there a missing seq is a rolled-back insert) before the sweep stops
# looking for it. The layer brings an event in milliseconds; a second is far past that.
SWEEP_EVERY_S = 0.5
LAYER_GRACE_S = 1.0
GAP_WAIT_S = 10.0
SWEEP_LIMIT = 5000  # seqs read per sweep; more are read at the next one
# What the fan-out sent stays known this long after the sweep passed it, so a layer message that
# arrives after the sweep sent its event from the log is dropped, not sent twice.
FORGET_AFTER_S = 60.0


class Stream(Protocol):
    """A socket or an SSE response: one caller's subscription and a way to send it frames."""

    subscription: Subscription
    frame_kind: Hashable  # streams of one kind and audience are sent the same frames
    stream_kind: str  # "websocket" | "sse", the open-streams metric's label

    async def frames(self, events: list[dict[str, Any]]) -> tuple[str, ...]:
        """The frames that carry ``events`` (live events, oldest first) to this kind of stream."""

    async def send_frames(self, frames: tuple[str, ...]) -> None: ...


@dataclass
class _Member:
    stream: Stream
    live: bool = False
    held: list[dict[str, Any]] = field(default_factory=list)  # arrived during the replay


class Fanout:
    """The timeline group's one member in this process and event loop."""

    def __init__(self) -> None:
        self.members: dict[int, _Member] = {}
        self._pending: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()
        self._lock = asyncio.Lock()
        self._tasks: list[asyncio.Task] = []
        self._layer: Any = None
        self._channel: str | None = None
        self._in_group = False
        # The sweep's state: every seq up to the cursor is settled (sent, or a gap given up on);
        # known holds when each seq above it (and lately below it) was first seen, sent those sent.
        self._cursor = 0
        self._known: dict[int, float] = {}
        self._sent: set[int] = set()

    async def join(self, stream: Stream) -> None:
        """Start holding events for ``stream``; call before its replay reads the log."""
        async with self._lock:
            if not self._tasks:
                await self._start()
            self.members[id(stream)] = _Member(stream)
        metrics.timeline_streams.labels(stream.stream_kind).inc()

    async def go_live(self, stream: Stream) -> None:
        """Send what was held during the replay (minus what it sent), then send live."""
        member = self.members.get(id(stream))
        if member is None:
            return
        while member.held:  # events may keep arriving while the held ones are written
            held, member.held = member.held, []
            after = stream.subscription.replayed_upto
            fresh = [event for event in held if event["seq"] > after]
            if fresh:
                await stream.send_frames(await stream.frames(fresh))
                metrics.timeline_events_fanned_out.inc(len(fresh))
        member.live = True

    async def leave(self, stream: Stream) -> None:
        async with self._lock:
            if self.members.pop(id(stream), None) is not None:
                metrics.timeline_streams.labels(stream.stream_kind).dec()
            if not self.members and self._tasks:
                await self._stop()

    async def _start(self) -> None:
        self._layer = get_channel_layer()
        # What is stored from here on is the fan-out's to send; before it, the streams' replays'.
        self._cursor = await database_sync_to_async(latest_seq)() or 0
        self._known, self._sent = {}, set()
        # The layer is joined by _receive, which keeps trying: with Redis down, streams still open
        # and the sweep sends them what is stored.
        jobs = (self._receive, self._deliver, self._keep_membership, self._sweep)
        self._tasks = [asyncio.create_task(job()) for job in jobs]

    async def _stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks = []
        self._pending = []
        channel, in_group, self._channel, self._in_group = self._channel, self._in_group, None, False
        if in_group:
            try:
                await self._layer.group_discard(TIMELINE_GROUP, channel)
            except Exception:  # noqa: BLE001 - Redis down: the subscription went with the connection
                logger.warning("timeline fan-out: leaving the channel layer's group failed", exc_info=True)

    async def _receive(self) -> None:
        failures = 0
        while True:
            try:
                if self._channel is None:
                    self._channel = await self._layer.new_channel()
                if not self._in_group:
                    await self._layer.group_add(TIMELINE_GROUP, self._channel)
                    self._in_group = True
                failures = 0
                message = await self._layer.receive(self._channel)
            except Exception:  # noqa: BLE001 - a layer hiccup (Redis restarting) must not end live delivery
                failures += 1
                logger.warning("timeline fan-out: the channel layer failed; retrying (the sweep sends what is"
                               " stored meanwhile)", exc_info=True)
                # Backing off: the pub/sub layer keeps a queue for each channel it failed to subscribe.
                await asyncio.sleep(min(RETRY_AFTER_S * 2 ** (failures - 1), RETRY_MAX_S))
                continue
            if message.get("type") == EVENTS_MESSAGE_TYPE:
                self._take([event for event in message["events"] if event["seq"] not in self._sent])

    def _take(self, events: list[dict[str, Any]]) -> None:
        """Queue events (live_event dicts) for the next tick, and remember them as sent."""
        now = asyncio.get_running_loop().time()
        for event in events:
            self._sent.add(event["seq"])
            self._known.setdefault(event["seq"], now)
        if events:
            self._pending.extend(events)
            self._arrived.set()

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_EVERY_S)
            try:
                await self._sweep_once()
            except Exception:  # noqa: BLE001 - the console database restarting: the next sweep tries again
                logger.warning("timeline fan-out: reading the event log failed", exc_info=True)

    async def _sweep_once(self) -> None:
        """Send from the log what it holds and the layer has not brought within LAYER_GRACE_S."""
        seqs = await database_sync_to_async(event_seqs_after)(after_seq=self._cursor, limit=SWEEP_LIMIT)
        now = asyncio.get_running_loop().time()
        missed: list[int] = []
        cursor, settled = self._cursor, True
        for seq in seqs:
            first_seen = self._known.setdefault(seq, now)
            sent = seq in self._sent
            if not sent and now - first_seen >= LAYER_GRACE_S:
                missed.append(seq)
                sent = True
            settled = settled and sent and (seq == cursor + 1 or now - first_seen >= GAP_WAIT_S)
            if settled:
                cursor = seq
        if missed:
            # Marked sent before the read, so the layer's copy arriving meanwhile is dropped, not sent too.
            self._sent.update(missed)
            try:
                events = await database_sync_to_async(_live_events)(missed)
            except BaseException:
                self._sent.difference_update(missed)  # the cursor stays below them: the next sweep sends them
                raise
            logger.info("timeline fan-out: sent %d event(s) from the log that the channel layer did not bring",
                        len(events))
            self._take(events)
        self._cursor = cursor
        for seq in [seq for seq, at in self._known.items() if seq <= cursor and now - at >= FORGET_AFTER_S]:
            del self._known[seq]
            self._sent.discard(seq)

    async def _keep_membership(self) -> None:
        while True:
            await asyncio.sleep(REJOIN_EVERY_S)
            if not self._in_group:
                continue  # _receive is still joining
            try:
                await self._layer.group_add(TIMELINE_GROUP, self._channel)
            except Exception:  # noqa: BLE001 - tried again at the next renewal, long before expiry
                logger.exception("timeline fan-out: renewing the group membership failed")

    async def _deliver(self) -> None:
        loop = asyncio.get_running_loop()
        sent_at, took = float("-inf"), 0.0
        while True:
            await self._arrived.wait()
            # A tick that took long to write (a thousand sockets) is followed by as long a gathering
            # time: the next frame carries more events instead of the loop doing nothing but write.
            wait = sent_at + max(TICK_S, took) - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self._arrived.clear()
            events, self._pending = self._pending, []
            sent_at = loop.time()
            try:
                await self._send_tick(events)
            except Exception:  # noqa: BLE001 - one bad tick must not end live delivery for the process
                logger.exception("timeline fan-out: a tick failed")
            took = loop.time() - sent_at

    async def _send_tick(self, events: list[dict[str, Any]]) -> None:
        received: dict[Any, tuple[list[dict[str, Any]], int]] = {}  # audience → its events, lowest seq
        frames: dict[tuple[Any, Hashable], tuple[str, ...]] = {}  # (audience, frame kind) → frames
        fanned_out = 0
        for count, member in enumerate(list(self.members.values()), start=1):
            if count % YIELD_EVERY == 0:
                await asyncio.sleep(0)  # let requests (ingest among them) run between writes
            subscription = member.stream.subscription
            audience = subscription.audience
            if audience not in received:
                mine = [event for event in events if subscription.receives(event)]
                received[audience] = (mine, min((event["seq"] for event in mine), default=0))
            mine, lowest = received[audience]
            if not mine:
                continue
            if not member.live:
                member.held.extend(mine)
                continue
            if lowest <= subscription.replayed_upto:
                # Stored before this stream's replay ended and already sent by it: this stream's own.
                mine = [event for event in mine if event["seq"] > subscription.replayed_upto]
                if mine:
                    await self._send(member.stream, await member.stream.frames(mine))
                    fanned_out += len(mine)
                continue
            key = (audience, member.stream.frame_kind)
            if key not in frames:
                frames[key] = await member.stream.frames(mine)
            await self._send(member.stream, frames[key])
            fanned_out += len(mine)
        metrics.timeline_events_fanned_out.inc(fanned_out)

    async def _send(self, stream: Stream, frames: tuple[str, ...]) -> None:
        try:
            await stream.send_frames(frames)
        except Exception:  # noqa: BLE001 - a stream that cannot be written is closing; the rest go on
            logger.debug("timeline fan-out: a stream could not be written", exc_info=True)


def _live_events(seqs: list[int]) -> list[dict[str, Any]]:
    return [live_event(row) for row in events_by_seq(seqs=seqs)]


_fanouts: dict[asyncio.AbstractEventLoop, Fanout] = {}


def process_fanout() -> Fanout:
    """This event loop's fan-out (a server process has one loop; a test may run several)."""
    loop = asyncio.get_running_loop()
    for stale in [other for other in _fanouts if other.is_closed()]:
        del _fanouts[stale]
    fanout = _fanouts.get(loop)
    if fanout is None:
        fanout = _fanouts[loop] = Fanout()
    return fanout
