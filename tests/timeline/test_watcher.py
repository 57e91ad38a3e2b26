"""The realm watcher over real files written by the store writer: events within 2 s, and a restart
that neither repeats nor misses anything."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest
from channels.db import database_sync_to_async

from memory_panel.simulator.store_writer import (
    StoreWriter,
    agent,
    batch,
    create_op,
    identity_scope,
    mob_scope,
    new_record,
    realm_scope,
)
from mobkit_console.timeline.models import RealmWatermark, TimelineEvent
from mobkit_console.timeline.watcher import RealmWatcher, lease_acquire, lease_release
from tests.support.sockets import open_socket, receive_events, token_for

pytestmark = pytest.mark.django_db(transaction=True)

REALM = "default"
LUKA = "identity:luka"
TAINT = "session tainted by web tool 'web_search'"


class RunningWatcher:
    """A RealmWatcher polled every 100 ms on the test's own DB thread, as ``watch_realms`` would."""

    def __init__(self) -> None:
        self.watcher = RealmWatcher()
        self.task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        while True:
            await database_sync_to_async(self.watcher.poll_once)()
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        self.task.cancel()
        try:
            await self.task
        except asyncio.CancelledError:
            pass
        await database_sync_to_async(self.watcher.close)()


async def next_event(socket, event_type: str) -> dict:
    frame = await socket.receive_json_from(timeout=2)  # within 2 s of the commit
    assert frame["type"] == "event"
    assert frame["event"]["event_type"] == event_type, frame
    return frame["event"]


def quarantined_write(writer: StoreWriter, title: str) -> str:
    record = new_record(kind="fact", title=title, body=f"{title} (from a web page)")
    op = create_op(identity_scope(REALM, LUKA), record)
    return writer.apply_batch(batch(realm=REALM, author=agent(LUKA), ops=[op]), gate_reason=TAINT).memory_ids[0]


async def test_store_writes_become_timeline_events_within_two_seconds(agent_memory_dir: Path):
    writer = StoreWriter.create(REALM, root=agent_memory_dir)
    socket = await open_socket("/ws/console/events/", token=await token_for("admin@example.test"))
    running = RunningWatcher()
    await asyncio.sleep(0.3)  # the first poll marks the existing file's end

    remembered = writer.remember(identity_scope(REALM, LUKA), "Prefers window seats", "Asked twice.")
    event = await next_event(socket, "memory.record.remembered")
    assert event["identity"] == LUKA
    assert event["data"] == {"realm": REALM, "record_id": remembered, "scope_kind": "identity", "scope_key": LUKA}

    origin = quarantined_write(writer, "Flight moved to 9am")
    event = await next_event(socket, "memory.write.quarantined")
    assert event["identity"] == "_system"
    assert event["data"] == {"realm": REALM, "author": 'Agent { identity: "identity:luka" }', "reason": TAINT,
                             "record_id": origin, "scope_kind": "identity", "scope_key": LUKA}

    writer.review_quarantine(origin, "release", reviewer={"kind": "operator", "principal": "ops@example.test"},
                             rationale="checked with the airline")
    event = await next_event(socket, "memory.quarantine.verdict")
    assert event["data"] == {"realm": REALM, "record_id": origin, "verdict": "release",
                             "successor_id": f"{origin}-released", "scope_kind": "identity", "scope_key": LUKA}
    assert "checked with the airline" not in str(event) and "ops@example.test" not in str(event)

    run_id = writer.new_dream_run_id()
    started_at = writer.clock()
    consolidated = writer.steward_batch(run_id, [create_op(realm_scope(REALM), new_record(
        kind="procedure", title="Travel bookings", body="Window seat, morning flights."))]).memory_ids[0]
    assert (await next_event(socket, "memory.dream.started"))["data"] == {"realm": REALM, "run_id": run_id}
    event = await next_event(socket, "memory.record.remembered")
    assert event["data"]["record_id"] == consolidated and event["identity"] == "_system"

    source = quarantined_write(writer, "Team offsite is in Lisbon")
    await next_event(socket, "memory.write.quarantined")
    pending_id = writer.stage_gated_promotion(source, mob_scope(REALM, "travel"), run_id=run_id,
                                              rationale="useful to the whole mob")
    event = await next_event(socket, "memory.promotion.pending_gate")
    assert event["data"] == {"realm": REALM, "pending_id": pending_id, "record_id": source,
                             "scope_kind": "mob", "scope_key": "travel"}

    writer.record_dream_run(run_id, started_at_ms=started_at, ops_committed=1, verdicts={"quarantine_gated": 1})
    event = await next_event(socket, "memory.dream.completed")
    assert event["data"]["run_id"] == run_id and event["data"]["ops_committed"] == 1
    assert event["data"]["detail"]["verdicts"]["quarantine_gated"] == 1

    receipt = writer.resolve_promotion(pending_id, "committed")
    event = await next_event(socket, "memory.record.promoted")
    assert event["data"] == {"realm": REALM, "record_id": receipt.memory_ids[0], "source_record_id": source,
                             "scope_kind": "mob", "scope_key": "travel", "proposal_id": None, "gated": True}

    writer.forget(remembered)
    event = await next_event(socket, "memory.record.forgotten")
    assert event["data"]["record_id"] == remembered

    assert await receive_events(socket) == []  # nothing extra: no second dream.started, no per-op noise
    await running.stop()
    await socket.disconnect()
    writer.close()


async def test_restarted_watcher_resumes_without_repeat_or_gap(agent_memory_dir: Path):
    writer = StoreWriter.create(REALM, root=agent_memory_dir)
    socket = await open_socket("/ws/console/events/", token=await token_for("admin@example.test"))
    running = RunningWatcher()
    await asyncio.sleep(0.3)
    before = [writer.remember(identity_scope(REALM, LUKA), f"Fact {n}", f"Body {n}") for n in range(3)]
    for record_id in before:
        assert (await next_event(socket, "memory.record.remembered"))["data"]["record_id"] == record_id
    await running.stop()

    # While no watcher runs: a remember, an update, a forget, a quarantined write and a dream run.
    during = writer.remember(identity_scope(REALM, LUKA), "Fact while down", "Body")
    updated = writer.supersede(before[0], "Fact 0, corrected", "Body 0 corrected")
    writer.forget(before[1])
    rumour = quarantined_write(writer, "Unverified rumour")
    run_id = writer.new_dream_run_id()
    writer.record_dream_run(run_id, started_at_ms=writer.clock(), ops_committed=0)

    running = RunningWatcher()
    frames = [await socket.receive_json_from(timeout=2) for _ in range(6)]
    assert [(f["event"]["event_type"], f["event"]["data"].get("record_id")) for f in frames] == [
        ("memory.record.remembered", during),
        ("memory.record.updated", updated),
        ("memory.record.forgotten", before[1]),
        ("memory.write.quarantined", rumour),
        ("memory.dream.started", None),
        ("memory.dream.completed", None),
    ]
    assert await receive_events(socket) == []
    await running.stop()

    # A third start with nothing new committed announces nothing.
    running = RunningWatcher()
    assert await receive_events(socket, quiet_s=0.6) == []
    await running.stop()

    counts = await database_sync_to_async(
        lambda: Counter(TimelineEvent.objects.values_list("source_event_id", flat=True)))()
    assert sum(counts.values()) == 9 and max(counts.values()) == 1
    await socket.disconnect()
    writer.close()


async def test_realm_appearing_while_watching_is_read_from_its_first_row(agent_memory_dir: Path):
    watcher = RealmWatcher()
    assert await database_sync_to_async(watcher.poll_once)() == []
    writer = StoreWriter.create("team:blue", root=agent_memory_dir)
    record_id = writer.remember(identity_scope("team:blue", LUKA), "New realm fact", "Body")

    stored = await database_sync_to_async(watcher.poll_once)()

    assert [(e.event_type, e.data["realm"], e.data["record_id"]) for e in stored] == [
        ("memory.record.remembered", "team:blue", record_id)]
    await database_sync_to_async(watcher.close)()
    writer.close()


async def test_recreated_realm_file_is_read_afresh_not_skipped(agent_memory_dir: Path):
    watcher = RealmWatcher()
    writer = StoreWriter.create(REALM, root=agent_memory_dir)
    await database_sync_to_async(watcher.poll_once)()
    for n in range(3):
        writer.remember(identity_scope(REALM, LUKA), f"Fact {n}", "Body")
    assert len(await database_sync_to_async(watcher.poll_once)()) == 3
    writer.close()

    writer = StoreWriter.create(REALM, root=agent_memory_dir, overwrite=True)
    fresh = writer.remember(identity_scope(REALM, LUKA), "After re-seed", "Body")
    stored = await database_sync_to_async(watcher.poll_once)()

    assert [e.data["record_id"] for e in stored] == [fresh]
    await database_sync_to_async(watcher.close)()
    writer.close()


def test_only_one_watcher_holds_the_lease_until_it_lets_go(db):
    assert lease_acquire(holder="host-a:1", ttl_ms=60_000)
    assert not lease_acquire(holder="host-b:2", ttl_ms=60_000)
    assert lease_acquire(holder="host-a:1", ttl_ms=60_000)  # renewal
    lease_release(holder="host-a:1")
    assert lease_acquire(holder="host-b:2", ttl_ms=60_000)


def test_an_expired_lease_passes_to_the_standby(db):
    assert lease_acquire(holder="host-a:1", ttl_ms=-1)  # already expired: the holder went silent
    assert lease_acquire(holder="host-b:2", ttl_ms=60_000)
    assert not lease_acquire(holder="host-a:1", ttl_ms=60_000)


def test_watch_realms_command_stands_by_while_another_holds_the_lease(db, agent_memory_dir: Path):
    from io import StringIO

    from django.core.management import call_command

    writer = StoreWriter.create(REALM, root=agent_memory_dir)
    assert lease_acquire(holder="other-host:1", ttl_ms=60_000)
    err = StringIO()

    call_command("watch_realms", "--once", stdout=StringIO(), stderr=err)

    assert "Another process (other-host:1) follows the realm files for the timeline; this one stands by." in err.getvalue()
    assert not RealmWatermark.objects.exists()  # it read nothing

    lease_release(holder="other-host:1")
    out = StringIO()
    call_command("watch_realms", "--once", stdout=out, stderr=StringIO())
    assert out.getvalue().startswith("The timeline now follows the realm files: what agents write shows up live")
    assert RealmWatermark.objects.get(realm=REALM).last_audit_id == 0
    writer.close()
