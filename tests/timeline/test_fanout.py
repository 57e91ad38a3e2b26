"""The process fan-out (docs/timeline-live.md §4): one group member per process, frames per audience.

What a reader depends on: every event exactly once and in order, whatever the burst size and
however the replay and live delivery overlap, and never an event of another audience's.
"""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from access.caller import Caller
from mobkit_console.timeline import fanout
from mobkit_console.timeline.ingest import IncomingEvent
from mobkit_console.timeline.selectors import EventFilter
from mobkit_console.timeline.services import events_store
from mobkit_console.timeline.stream import Subscription
from tests.support.postures import TIMELINE_AUDIENCE
from tests.support.sockets import envelope, ingest, open_socket, receive_events, token_for
from tests.timeline.audience import VISIBILITY_EVENTS, VISIBLE_TO

pytestmark = pytest.mark.django_db(transaction=True)

EVENTS_PATH = "/ws/console/events/"


def _event_ids(frames: list[dict]) -> list[str]:
    out = []
    for frame in frames:
        out.extend(e["event_id"] for e in frame["events"]) if frame["type"] == "events" \
            else out.append(frame["event"]["event_id"])
    return out


async def test_a_burst_larger_than_a_channel_queue_reaches_every_socket_whole_and_in_order(ingest_token):
    # The in-memory layer's queues hold 100 messages; one ingest of 1000 is one group message.
    token = await token_for("admin@example.test")
    plain = await open_socket(EVENTS_PATH, token=token)
    batched = await open_socket(EVENTS_PATH, token=token, query="batch=1")

    status, body = await ingest([envelope(run_id=f"burst-{n}") for n in range(1000)])
    assert status == 201

    assert _event_ids(await receive_events(plain)) == body["event_ids"]
    batched_frames = await receive_events(batched)
    assert _event_ids(batched_frames) == body["event_ids"]
    assert len(batched_frames) < 10  # a tick's events share a frame
    await plain.disconnect()
    await batched.disconnect()


async def test_events_stored_during_a_replay_follow_it_once_and_in_order(ingest_token):
    token = await token_for("admin@example.test")
    stored = []
    for batch in range(2):  # 1200 events: a replay of three chunks
        _, body = await ingest([envelope(run_id=f"old-{batch}-{n}") for n in range(600)])
        stored.extend(body["event_ids"])

    async def push_while_replaying() -> list[str]:
        ids = []
        for n in range(20):
            _, body = await ingest(envelope(run_id=f"new-{n}"))
            ids.extend(body["event_ids"])
            await asyncio.sleep(0)
        return ids

    socket, pushed = await asyncio.gather(
        open_socket(EVENTS_PATH, token=token, query="after=console-evt-0&batch=1"), push_while_replaying())

    assert _event_ids(await receive_events(socket)) == stored + pushed
    await socket.disconnect()


async def test_sockets_of_different_callers_open_at_once_each_get_only_their_own(ingest_token, access_toml):
    access_toml(TIMELINE_AUDIENCE)
    sockets = {subject: await open_socket(EVENTS_PATH, token=await token_for(subject)) for subject, _ in VISIBLE_TO}

    _, body = await ingest(list(VISIBILITY_EVENTS.values()))  # one tick, every audience at once
    names = dict(zip(body["event_ids"], VISIBILITY_EVENTS))

    for subject, expected in VISIBLE_TO:
        received = [names[event_id] for event_id in _event_ids(await receive_events(sockets[subject]))]
        assert sorted(received) == sorted(expected), subject
        await sockets[subject].disconnect()


async def test_a_process_stays_subscribed_past_the_layers_group_expiry(ingest_token, monkeypatch):
    # The in-memory layer drops a group member after group_expiry (a day by default); shrink both
    # that and the renewal period so the socket outlives several expiries within the test.
    monkeypatch.setattr(get_channel_layer(), "group_expiry", 1)
    monkeypatch.setattr(fanout, "REJOIN_EVERY_S", 0.3)
    socket = await open_socket(EVENTS_PATH, token=await token_for("admin@example.test"))
    await asyncio.sleep(2.5)

    _, body = await ingest(envelope(run_id="after-expiry"))

    assert _event_ids(await receive_events(socket)) == body["event_ids"]
    await socket.disconnect()


class _Unwritable:
    """A stream whose client is gone mid-write (the fan-out's Stream shape; no transport behind it)."""

    frame_kind = "unwritable"
    stream_kind = "websocket"

    def __init__(self) -> None:
        self.subscription = Subscription(Caller(subject="admin@example.test"), EventFilter())

    async def frames(self, events: list[dict]) -> tuple[str, ...]:
        return ("frame",)

    async def send_frames(self, frames: tuple[str, ...]) -> None:
        raise ConnectionResetError("the client went away")


async def test_a_stream_that_cannot_be_written_does_not_keep_the_event_from_the_others(ingest_token):
    process = fanout.process_fanout()
    gone = _Unwritable()
    await process.join(gone)  # joined first, so it is written to first
    await process.go_live(gone)
    socket = await open_socket(EVENTS_PATH, token=await token_for("admin@example.test"))

    _, body = await ingest(envelope(run_id="after-a-broken-stream"))

    assert _event_ids(await receive_events(socket)) == body["event_ids"]
    await socket.disconnect()
    await process.leave(gone)


def _store_unannounced(run_id: str) -> list[str]:
    """Store an event as a push does, minus the publish: what a push while Redis is down leaves."""
    event = IncomingEvent(None, "_system", "memory.dream.started", 1_700_000_000_000,
                          {"realm": "default", "run_id": run_id}, None)
    return [row.event_id for row in events_store(events=[event])]


async def test_an_event_stored_but_never_published_reaches_an_open_socket_from_the_log(ingest_token):
    # docs/timeline-live.md §4: the layer dropped the message (Redis down); the fan-out's sweep of
    # the log sends the event all the same, once.
    socket = await open_socket(EVENTS_PATH, token=await token_for("admin@example.test"))

    stored = await database_sync_to_async(_store_unannounced)("never-published")

    quiet_s = fanout.LAYER_GRACE_S + 2 * fanout.SWEEP_EVERY_S + 0.5
    assert _event_ids(await receive_events(socket, quiet_s=quiet_s)) == stored
    await socket.disconnect()


async def test_an_event_the_layer_brought_is_not_sent_again_from_the_log(ingest_token):
    socket = await open_socket(EVENTS_PATH, token=await token_for("admin@example.test"))

    _, body = await ingest(envelope(run_id="published"))

    # Quiet for longer than the sweep takes to send from the log what the layer had not brought.
    quiet_s = fanout.LAYER_GRACE_S + 2 * fanout.SWEEP_EVERY_S + 0.5
    assert _event_ids(await receive_events(socket, quiet_s=quiet_s)) == body["event_ids"]
    await socket.disconnect()
