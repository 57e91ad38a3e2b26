"""WS /ws/console/events/ and /ws/console/timeline/: who gets which event, replay, revocation."""

from __future__ import annotations

import asyncio
import time

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from mobkit_console.asgi import application
from mobkit_console.timeline.consumers import EventStreamConsumer
from mobkit_console.timeline.models import TimelineEvent
from mobkit_console.timeline.services import events_prune
from tests.support.postures import TIMELINE_AUDIENCE
from tests.support.sockets import envelope, ingest, open_socket, receive_events, token_for

pytestmark = pytest.mark.django_db(transaction=True)

EVENTS_PATH = "/ws/console/events/"

VISIBILITY_EVENTS = {
    "luka": envelope("identity:luka", "memory.harvest.completed", identity="identity:luka", promoted=1, tombstoned=0),
    "mira": envelope("identity:mira", "memory.harvest.completed", identity="identity:mira", promoted=0, tombstoned=1),
    "system": envelope("_system", "memory.dream.started", run_id="dream-1"),
    "system-mob": envelope("_system", "memory.promotion.pending_gate", pending_id="gate-pending-000001",
                           record_id="mem-1", scope_kind="mob", scope_key="team"),
    "luka-scoped": envelope("identity:luka", "memory.record.remembered", record_id="mem-2",
                            scope_kind="identity", scope_key="identity:luka"),
    "system-luka-scoped": envelope("_system", "memory.write.quarantined", author='Agent { identity: "identity:luka" }',
                                   reason="llm_writes=quarantined policy", scope_kind="identity",
                                   scope_key="identity:luka"),
}


@pytest.mark.parametrize("path", [EVENTS_PATH, "/ws/console/timeline/"])
@pytest.mark.parametrize("token", [None, "mkc_not-a-real-token"])
async def test_unauthenticated_socket_is_closed_with_4401(path, token):
    communicator = WebsocketCommunicator(application, f"{path}?auth_token={token}" if token else path)
    connected, _ = await communicator.connect()

    assert connected  # accepted only to deliver the close code the contract names
    assert await communicator.receive_output(timeout=1) == {"type": "websocket.close", "code": 4401}


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("alice@example.test", set(VISIBILITY_EVENTS)),
        ("bob@example.test", {"luka", "luka-scoped"}),
        ("carol@example.test", {"luka", "mira", "system"}),
        ("dave@example.test", {"luka", "mira", "system", "system-mob"}),
        ("erin@example.test", set()),
    ],
)
async def test_each_socket_gets_only_events_its_subject_may_see(ingest_token, access_toml, subject, expected):
    access_toml(TIMELINE_AUDIENCE)
    socket = await open_socket(EVENTS_PATH, token=await token_for(subject))

    status, body = await ingest(list(VISIBILITY_EVENTS.values()))
    assert status == 201
    ids = dict(zip(body["event_ids"], VISIBILITY_EVENTS))

    frames = await receive_events(socket)
    assert {ids[f["event"]["event_id"]] for f in frames} == expected
    assert all(f["type"] == "event" for f in frames)
    await socket.disconnect()


async def test_without_access_config_every_signed_in_caller_sees_everything(ingest_token):
    socket = await open_socket(EVENTS_PATH, token=await token_for("nobody@example.test"))

    status, body = await ingest(list(VISIBILITY_EVENTS.values()))

    frames = await receive_events(socket)
    assert [f["event"]["event_id"] for f in frames] == body["event_ids"]
    assert frames[0]["event"] == {"event_id": body["event_ids"][0], **VISIBILITY_EVENTS["luka"]}
    await socket.disconnect()


async def test_filters_in_the_socket_url_narrow_the_stream(ingest_token):
    token = await token_for("admin@example.test")
    by_type = await open_socket(EVENTS_PATH, token=token, query="event_type=memory.dream.started")
    by_identity = await open_socket(EVENTS_PATH, token=token, query="identity=identity:mira")

    await ingest(list(VISIBILITY_EVENTS.values()))

    assert [f["event"]["event_type"] for f in await receive_events(by_type)] == ["memory.dream.started"]
    assert [f["event"]["identity"] for f in await receive_events(by_identity)] == ["identity:mira"]
    await by_type.disconnect()
    await by_identity.disconnect()


async def test_replay_after_disconnect_delivers_exactly_the_missed_events_then_live(ingest_token):
    token = await token_for("admin@example.test")
    socket = await open_socket(EVENTS_PATH, token=token)
    _, seen = await ingest(envelope(run_id="dream-1"))
    last_seen = (await receive_events(socket))[-1]["event"]["event_id"]
    assert last_seen == seen["event_ids"][0]
    await socket.disconnect()

    _, missed = await ingest([envelope(run_id="dream-2"), envelope(run_id="dream-3"), envelope(run_id="dream-4")])

    socket = await open_socket(EVENTS_PATH, token=token, query=f"after={last_seen}")
    _, live = await ingest(envelope(run_id="dream-5"))
    frames = await receive_events(socket)
    assert [f["event"]["event_id"] for f in frames] == missed["event_ids"] + live["event_ids"]
    assert [f["event"]["data"]["run_id"] for f in frames] == ["dream-2", "dream-3", "dream-4", "dream-5"]
    await socket.disconnect()


async def test_replay_skips_events_the_caller_may_not_see(ingest_token, access_toml):
    access_toml(TIMELINE_AUDIENCE)
    _, first = await ingest(envelope("identity:luka", "memory.harvest.completed"))
    _, later = await ingest([envelope("identity:mira", "memory.harvest.completed"),
                             envelope("identity:luka", "memory.distill.timed_out")])

    socket = await open_socket(EVENTS_PATH, token=await token_for("bob@example.test"),
                               query=f"after={first['event_ids'][0]}")
    frames = await receive_events(socket)
    assert [f["event"]["event_id"] for f in frames] == later["event_ids"][1:]
    await socket.disconnect()


@pytest.mark.parametrize("requested", ["pruned", "console-evt-999999", "not-an-event-id"])
async def test_replay_unavailable_when_the_log_does_not_hold_the_cursor(ingest_token, settings, requested):
    settings.MOBKIT_TIMELINE_MAX_EVENTS = 2
    _, body = await ingest([envelope(run_id=f"dream-{n}") for n in range(5)])
    await database_sync_to_async(events_prune)()  # ingest may already have pruned: it does when due
    kept = await database_sync_to_async(lambda: list(TimelineEvent.objects.values_list("seq", flat=True)))()
    assert len(kept) == 2
    requested = body["event_ids"][0] if requested == "pruned" else requested
    latest = body["event_ids"][-1]

    socket = await open_socket(EVENTS_PATH, token=await token_for("admin@example.test"), query=f"after={requested}")
    frames = await receive_events(socket)
    assert frames == [{"type": "replay_unavailable", "requested": requested, "latest": latest}]
    _, live = await ingest(envelope(run_id="dream-6"))
    assert [f["event"]["event_id"] for f in await receive_events(socket)] == live["event_ids"]
    await socket.disconnect()


async def test_revoked_subject_stops_receiving_within_five_seconds(ingest_token, access_toml):
    access_toml(TIMELINE_AUDIENCE)
    bob = await open_socket(EVENTS_PATH, token=await token_for("bob@example.test"))
    alice = await open_socket(EVENTS_PATH, token=await token_for("alice@example.test"))
    await ingest(envelope("identity:luka", "memory.harvest.completed"))
    assert len(await receive_events(bob, quiet_s=0.2)) == 1
    await receive_events(alice, quiet_s=0.2)

    access_toml(TIMELINE_AUDIENCE.replace('actions = ["agent.view", "agent.memory.read"]', 'actions = ["agent.memory.read"]'))
    revoked_at = time.monotonic()
    cut_off_after = None
    while time.monotonic() - revoked_at < 6:
        await ingest(envelope("identity:luka", "memory.harvest.completed"))
        assert len(await receive_events(alice, quiet_s=0.2)) == 1  # the event was sent
        if not await receive_events(bob, quiet_s=0.05):
            cut_off_after = time.monotonic() - revoked_at
            break
    assert cut_off_after is not None and cut_off_after < 5

    for _ in range(3):  # and stays cut off
        await ingest(envelope("identity:luka", "memory.harvest.completed"))
        assert await receive_events(bob, quiet_s=0.2) == []
    await bob.disconnect()
    await alice.disconnect()


async def test_keep_alive_frames_arrive_on_an_idle_socket(monkeypatch):
    monkeypatch.setattr(EventStreamConsumer, "keep_alive_interval_s", 0.1)
    socket = await open_socket(EVENTS_PATH, token=await token_for("admin@example.test"))

    assert await socket.receive_json_from(timeout=2) == {"type": "keep_alive"}
    assert EventStreamConsumer.keep_alive_interval_s < 15
    await socket.disconnect()


async def test_timeline_socket_sends_out_of_band_fragments_with_record_link(ingest_token):
    socket = await open_socket("/ws/console/timeline/", token=await token_for("admin@example.test"))

    _, body = await ingest(envelope("_system", "memory.write.quarantined", record_id="mem-9",
                                    author='Agent { identity: "identity:luka" }', reason="<b>tainted</b>"))

    html = await socket.receive_from(timeout=2)
    assert html.startswith('<ol id="timeline-events" hx-swap-oob="afterbegin">')
    assert f'id="{body["event_ids"][0]}"' in html
    assert "timeline-event--warning" in html
    assert 'href="/console/memory/records/mem-9/?realm=default"' in html
    assert "&lt;b&gt;tainted&lt;/b&gt;" in html and "<b>" not in html
    await socket.disconnect()


async def test_timeline_socket_reports_replay_unavailable_as_a_status_fragment():
    socket = await open_socket("/ws/console/timeline/", token=await token_for("admin@example.test"),
                               query="after=console-evt-404")

    html = await socket.receive_from(timeout=2)
    assert 'id="timeline-status"' in html and 'hx-swap-oob="true"' in html
    assert "console-evt-404" in html
    await socket.disconnect()


async def test_socket_closed_and_reopened_does_not_leak_group_membership(ingest_token):
    token = await token_for("admin@example.test")
    socket = await open_socket(EVENTS_PATH, token=token)
    await socket.disconnect()
    await asyncio.sleep(0)
    status, _ = await ingest(envelope())
    assert status == 201  # a departed socket does not break fan-out for the rest


async def test_start_of_log_cursor_replays_everything_the_log_holds(ingest_token):
    _, body = await ingest([envelope(run_id="dream-1"), envelope(run_id="dream-2")])

    socket = await open_socket(EVENTS_PATH, token=await token_for("admin@example.test"), query="after=console-evt-0")
    assert [f["event"]["event_id"] for f in await receive_events(socket)] == body["event_ids"]
    await socket.disconnect()
