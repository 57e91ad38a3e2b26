"""GET /console/events/stream: the sockets' events as Server-Sent Events (docs/timeline.md §T.4).

Driven in-process through Django's AsyncClient; the stream's body is read while events are ingested.
"""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from mobkit_console.timeline import views as timeline_views
from mobkit_console.timeline.models import TimelineEvent
from mobkit_console.timeline.services import events_prune

from tests.support.postures import TIMELINE_AUDIENCE
from tests.support.sockets import envelope, ingest, token_for
from tests.support.sse import STREAM, SseReader, open_stream

from tests.timeline.audience import VISIBILITY_EVENTS, VISIBLE_TO

pytestmark = pytest.mark.django_db(transaction=True)

async def subscribe(subject: str, *, query: str = "", headers: dict[str, str] | None = None) -> SseReader:
    response = await open_stream(token=await token_for(subject), query=query, headers=headers)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    reader = SseReader(response.streaming_content)
    assert await asyncio.wait_for(reader.queue.get(), 2) == {"comment": "connected"}
    return reader


@pytest.mark.parametrize("token", [None, "mkc_not-a-real-token"])
async def test_unauthenticated_stream_is_refused_with_401_and_a_json_error(token):
    response = await open_stream(token=token)

    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "unauthorized"


async def test_auth_token_in_the_query_string_opens_the_stream(ingest_token):
    token = await token_for("admin@example.test")
    response = await open_stream(token=None, query=f"auth_token={token}")
    assert response.status_code == 200
    reader = SseReader(response.streaming_content)
    _, body = await ingest(envelope(run_id="dream-1"))

    events = await reader.events()
    assert [e["id"] for e in events] == body["event_ids"]
    await reader.close()


async def test_each_event_is_id_event_type_and_envelope_json(ingest_token):
    reader = await subscribe("admin@example.test")

    _, body = await ingest(envelope("identity:luka", "memory.harvest.completed", identity="identity:luka",
                                    promoted=1, tombstoned=0))

    assert await reader.events() == [{
        "id": body["event_ids"][0],
        "event": "memory.harvest.completed",
        "data": {"event_id": body["event_ids"][0], "identity": "identity:luka",
                 "event_type": "memory.harvest.completed", "timestamp_ms": 1_700_000_000_000,
                 "data": {"realm": "default", "identity": "identity:luka", "promoted": 1, "tombstoned": 0}},
    }]
    await reader.close()


@pytest.mark.parametrize(("subject", "expected"), VISIBLE_TO)
async def test_each_stream_gets_only_events_its_subject_may_see(ingest_token, access_toml, subject, expected):
    access_toml(TIMELINE_AUDIENCE)
    reader = await subscribe(subject)

    _, body = await ingest(list(VISIBILITY_EVENTS.values()))
    ids = dict(zip(body["event_ids"], VISIBILITY_EVENTS))

    assert {ids[e["id"]] for e in await reader.events()} == expected
    await reader.close()


@pytest.mark.parametrize("resume", ["header", "query"])
async def test_last_event_id_or_after_replays_exactly_the_missed_events_then_live(ingest_token, resume):
    _, seen = await ingest(envelope(run_id="dream-1"))
    _, missed = await ingest([envelope(run_id="dream-2"), envelope(run_id="dream-3")])
    last = seen["event_ids"][0]

    if resume == "header":
        # Last-Event-ID wins over ?after=, as an EventSource reconnecting sends it.
        reader = await subscribe("admin@example.test", query="after=console-evt-999999",
                                 headers={"Last-Event-ID": last})
    else:
        reader = await subscribe("admin@example.test", query=f"after={last}")
    _, live = await ingest(envelope(run_id="dream-4"))

    events = await reader.events()
    assert [e["id"] for e in events] == missed["event_ids"] + live["event_ids"]
    assert [e["data"]["data"]["run_id"] for e in events] == ["dream-2", "dream-3", "dream-4"]
    await reader.close()


async def test_replay_unavailable_names_the_requested_and_latest_ids_then_streams_live(ingest_token, settings):
    settings.MOBKIT_TIMELINE_MAX_EVENTS = 2
    _, body = await ingest([envelope(run_id=f"dream-{n}") for n in range(5)])
    await database_sync_to_async(events_prune)()
    assert await database_sync_to_async(TimelineEvent.objects.count)() == 2
    pruned, latest = body["event_ids"][0], body["event_ids"][-1]

    reader = await subscribe("admin@example.test", headers={"Last-Event-ID": pruned})
    assert await reader.events() == [{"event": "replay_unavailable", "data": {"requested": pruned, "latest": latest}}]
    _, live = await ingest(envelope(run_id="dream-6"))
    assert [e["id"] for e in await reader.events()] == live["event_ids"]
    await reader.close()


async def test_filters_narrow_the_stream(ingest_token):
    by_type = await subscribe("admin@example.test", query="event_type=memory.dream.started")
    by_identity = await subscribe("admin@example.test", query="identity=identity:mira")

    await ingest(list(VISIBILITY_EVENTS.values()))

    assert [e["event"] for e in await by_type.events()] == ["memory.dream.started"]
    assert [e["data"]["identity"] for e in await by_identity.events()] == ["identity:mira"]
    await by_type.close()
    await by_identity.close()


async def test_an_idle_stream_gets_a_comment_line_well_within_fifteen_seconds(monkeypatch):
    assert timeline_views.SSE_KEEP_ALIVE_S < 15
    monkeypatch.setattr(timeline_views, "SSE_KEEP_ALIVE_S", 0.1)
    reader = await subscribe("admin@example.test")

    assert await asyncio.wait_for(reader.queue.get(), 2) == {"comment": "keep-alive"}
    await reader.close()
