"""POST /console/events: the runtime's push, all-or-nothing, stored before it is acknowledged."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async

from mobkit_console.timeline.models import TimelineEvent
from tests.support.db_faults import inserts_refused
from tests.support.sockets import (
    envelope,
    ingest,
    ingest_raw,
    ingest_response,
    open_socket,
    receive_events,
    token_for,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def stored_count() -> int:
    return await database_sync_to_async(TimelineEvent.objects.count)()


async def test_ingest_stores_and_answers_console_ids(ingest_token):
    status, body = await ingest([envelope(run_id="dream-1"), envelope(run_id="dream-2")])

    assert status == 201
    assert len(body["event_ids"]) == 2
    first, second = (int(e.removeprefix("console-evt-")) for e in body["event_ids"])
    assert second > first
    rows = await database_sync_to_async(lambda: [r.envelope() for r in TimelineEvent.objects.all()])()
    assert [r["event_id"] for r in rows] == body["event_ids"]
    assert rows[0] == {"event_id": body["event_ids"][0], "identity": "_system", "event_type": "memory.dream.started",
                       "timestamp_ms": 1_700_000_000_000, "data": {"realm": "default", "run_id": "dream-1"}}


@pytest.mark.parametrize("token", ["", "wrong-token", "test-ingest-secre"])
async def test_ingest_refuses_missing_or_wrong_token_with_401(ingest_token, token):
    status, body = await ingest(envelope(), token=token)

    assert status == 401
    assert body["error"] == "unauthorized"
    assert await stored_count() == 0


async def test_ingest_refused_when_no_token_is_configured(settings):
    settings.MOBKIT_INGEST_TOKEN = None

    status, body = await ingest(envelope(), token="anything")

    assert status == 403
    assert "MOBKIT_INGEST_TOKEN is not set" in body["message"]
    assert await stored_count() == 0


def _with(**changes):
    event = envelope()
    for key, value in changes.items():
        if value is _DROP:
            event.pop(key)
        else:
            event[key] = value
    return event


_DROP = object()
NOT_FINITE = "is not a finite number (JSON has no NaN or Infinity)"


def nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (_with(event_type="memory.nope"), "events[2].event_type: must be one of the documented memory.* event types"),
        (_with(event_type=_DROP), "events[2].event_type: must be one of the documented memory.* event types"),
        (_with(event_type="agent.spawned"), "events[2].event_type: must be one of the documented memory.* event types"),
        (_with(identity=""), "events[2].identity: must be a non-empty string"),
        (_with(identity="   "), "events[2].identity: must be a non-empty string"),
        (_with(identity=7), "events[2].identity: must be a non-empty string"),
        (_with(identity="x" * 300), "events[2].identity: at most 256 characters"),
        (_with(timestamp_ms="1700000000000"), "events[2].timestamp_ms: must be an integer"),
        (_with(timestamp_ms=1.5), "events[2].timestamp_ms: must be an integer"),
        (_with(timestamp_ms=True), "events[2].timestamp_ms: must be an integer"),
        (_with(timestamp_ms=_DROP), "events[2].timestamp_ms: must be an integer"),
        (_with(timestamp_ms=-1), "events[2].timestamp_ms: must be between 0 and 2^63-1"),
        (_with(data=[1, 2]), "events[2].data: must be an object"),
        (_with(data=_DROP), "events[2].data: must be an object"),
        (_with(data={"blob": "x" * 70_000}), "events[2].data: at most 65536 bytes of JSON"),
        (_with(event_id=""), "events[2].event_id: must be a non-empty string when present"),
        (_with(event_id="e" * 201), "events[2].event_id: at most 200 characters"),
        ("not an object", "events[2]: must be an object"),
        # docs/timeline.md §T.7: Python's json accepts these, the event log cannot store or send them back.
        (_with(data={"score": float("nan")}), f"events[2].data.score: NaN {NOT_FINITE}"),
        (_with(data={"score": [1, float("-inf")]}), f"events[2].data.score[1]: -Infinity {NOT_FINITE}"),
        (_with(identity="scout\ud800"), "events[2].identity: lone surrogate \\ud800 is not valid Unicode"),
        (_with(data={"note": "ok \udfff"}), "events[2].data.note: lone surrogate \\udfff is not valid Unicode"),
        (_with(data={"x\udc00": 1}), "events[2].data.x\\udc00: lone surrogate \\udc00 is not valid Unicode"),
    ],
)
async def test_batch_with_one_bad_field_is_refused_whole_naming_it(ingest_token, bad, message):
    status, body = await ingest([envelope(), envelope(), bad, envelope()])

    assert status == 400
    assert body == {"error": "invalid_event", "message": message}
    assert await stored_count() == 0


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"{not json", "body: not valid JSON"),
        (b"[]", "events: must not be empty"),
        (b"42", "body: must be an event object or an array of them"),
        (json.dumps(_with(timestamp_ms="x")).encode(), "event.timestamp_ms: must be an integer"),
        (json.dumps([envelope()] * 1001).encode(), "events: at most 1000 events per request"),
        (b"[" * 1000 + b"]" * 1000, "body: nested deeper than 64 levels"),
        (json.dumps(_with(data=nested(100))).encode(), "event.data.a.a.a.a.a…: nested deeper than 64 levels"),
        (b'{"identity": "_system", "event_type": "memory.dream.started", "timestamp_ms": 1e999, "data": {}}',
         f"event.timestamp_ms: 1e999 {NOT_FINITE}"),
    ],
)
async def test_malformed_body_is_refused_with_clear_message(ingest_token, raw, message):
    status, answer = await ingest_raw(raw, token=ingest_token)

    assert status == 400
    assert answer["message"].startswith(message)
    assert await stored_count() == 0


async def test_a_refusal_quoting_the_body_is_json_a_browser_will_not_sniff(ingest_token):
    response = await ingest_response(b'[{"identity": "<script>alert(1)</script>"}]', token=ingest_token)

    assert response["status"] == 400
    headers = {name.lower(): value for name, value in response["headers"]}
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"x-content-type-options"] == b"nosniff"


async def test_only_post_is_ingest(ingest_token):
    status, answer = await ingest_raw(b"", token=ingest_token, method="GET")

    assert status == 405
    assert answer["error"] == "method_not_allowed"


async def test_oversized_body_is_refused_with_413(ingest_token, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    status, body = await ingest([envelope(pad="x" * 2000)])

    assert status == 413
    assert await stored_count() == 0


async def test_retried_push_is_stored_once_and_announced_once(ingest_token):
    socket = await open_socket("/ws/console/events/", token=await _admin_token())
    push = [envelope(run_id="dream-7") | {"event_id": "runtime-evt-41"}, envelope(run_id="dream-8")]

    status1, first = await ingest(push)
    status2, retry = await ingest(push[:1])

    assert (status1, status2) == (201, 201)
    assert retry["event_ids"] == first["event_ids"][:1]
    assert await stored_count() == 2
    row = await database_sync_to_async(TimelineEvent.objects.get)(source_event_id="runtime-evt-41")
    assert row.event_id == first["event_ids"][0]
    frames = await receive_events(socket)
    assert [f["event"]["event_id"] for f in frames] == first["event_ids"]
    await socket.disconnect()


async def test_same_source_id_twice_in_one_batch_is_one_event(ingest_token):
    status, body = await ingest([envelope() | {"event_id": "dup"}, envelope() | {"event_id": "dup"}])

    assert status == 201
    assert body["event_ids"][0] == body["event_ids"][1]
    assert await stored_count() == 1


async def _admin_token() -> str:
    return await token_for("admin@example.test")


async def test_log_is_bounded_by_age_and_by_count(ingest_token, settings):
    import datetime

    from django.utils import timezone

    from mobkit_console.timeline.services import events_prune

    _, body = await ingest([envelope(run_id=f"dream-{n}") for n in range(6)])
    old = body["event_ids"][:2]
    await database_sync_to_async(
        lambda: TimelineEvent.objects.filter(seq__in=[int(e.removeprefix("console-evt-")) for e in old]).update(
            stored_at=timezone.now() - datetime.timedelta(days=31)))()
    settings.MOBKIT_TIMELINE_MAX_AGE_DAYS = 30
    settings.MOBKIT_TIMELINE_MAX_EVENTS = 3

    assert await database_sync_to_async(events_prune)() == 3
    remaining = await database_sync_to_async(lambda: [r.event_id for r in TimelineEvent.objects.all()])()
    assert remaining == body["event_ids"][3:]


def test_a_push_the_console_database_cannot_store_is_a_json_503_to_push_again(ingest_token):
    # Never an HTML 500: the runtime reads the answer, and a 503 tells it to push the same events again.
    push = json.dumps(envelope() | {"event_id": "runtime-evt-9"}).encode()
    with inserts_refused("timeline_timelineevent"):
        response = async_to_sync(ingest_response)(push)

    assert response["status"] == 503
    headers = {name.lower(): value for name, value in response["headers"]}
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"retry-after"] == b"1"
    answer = json.loads(response["body"])
    assert answer["error"] == "unavailable" and "push them again" in answer["message"]
    assert TimelineEvent.objects.count() == 0
    assert async_to_sync(ingest_response)(push)["status"] == 201
    assert TimelineEvent.objects.count() == 1
