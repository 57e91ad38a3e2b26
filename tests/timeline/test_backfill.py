"""A real deployment's history on the timeline (docs/history.md §1, §2): a realm written without a
console gets exactly the events its audit rows imply, once, across restarts, the hand-run command
and two processes; the follower goes on from there with no gap and no repeat."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from memory_panel.simulator.store_writer import ManualClock, StoreWriter, identity_scope, wall_clock_ms
from mobkit_console.timeline.models import RealmWatermark, TimelineEvent
from mobkit_console.timeline.watcher import RealmWatcher, lease_acquire, lease_release
from tests.support.servers import PYTHON, REPO, console_db, deployment_env, manage

pytestmark = pytest.mark.django_db

DAY_MS = 86_400_000
LUKA = "identity:luka"
QUIET = {"broadcast": lambda rows: None}


def follow_until_caught_up(watcher: RealmWatcher) -> list[TimelineEvent]:
    stored = list(watcher.poll_once())
    while watcher.catching_up():
        stored += watcher.poll_once()
    return stored


def implied_by_audit(realm_file: Path) -> Counter:
    """The events a realm's audit rows imply, counted by type, from the file alone
    (docs/timeline.md §T.8): one per non-quarantined create/supersede/tombstone outside review and
    gated-promotion batches, one per quarantined batch, one per review, one per promotion row."""
    conn = sqlite3.connect(f"file:{realm_file}?mode=ro", uri=True)
    try:
        batches: dict[str, list[tuple[str, dict]]] = {}
        for token, op, detail in conn.execute("SELECT stage_token, op_kind, detail FROM audit ORDER BY audit_id"):
            batches.setdefault(token, []).append((op, json.loads(detail)))
        gated = {row[0] for row in conn.execute("SELECT stage_token FROM pending_promotions")}
        out: Counter = Counter()
        kinds = {"create": "memory.record.remembered", "supersede": "memory.record.updated",
                 "tombstone": "memory.record.forgotten"}
        for token, rows in batches.items():
            first = rows[0][1]
            if first.get("op") == "markdown_import" or rows[0][0] == "import_summary":
                continue
            if isinstance(first.get("review"), dict):
                out["memory.quarantine.verdict"] += 1
            elif token in gated:
                out["memory.record.promoted"] += 1
            else:
                out["memory.write.quarantined"] += any(detail.get("quarantined") for _, detail in rows)
                for op, detail in rows:
                    if op in kinds and not detail.get("quarantined"):
                        out[kinds[op]] += 1
        out["memory.promotion.pending_gate"] += conn.execute("SELECT COUNT(*) FROM pending_promotions").fetchone()[0]
        out["memory.dream.completed"] += conn.execute("SELECT COUNT(*) FROM dream_runs").fetchone()[0]
        return +out
    finally:
        conn.close()


def record_kinds(counter: Counter) -> Counter:
    return Counter({kind: n for kind, n in counter.items() if kind != "memory.dream.started"})


def test_a_realm_written_without_a_console_gets_its_history_once(agent_memory_dir: Path):
    call_command("seed_demo", "--realm", "ops", "--no-timeline", stdout=StringIO())
    assert not TimelineEvent.objects.exists()

    watcher = RealmWatcher(**QUIET)
    stored = follow_until_caught_up(watcher)
    watcher.close()

    kinds = Counter(row.event_type for row in stored)
    assert record_kinds(kinds) == implied_by_audit(agent_memory_dir / "ops.sqlite3")
    assert kinds["memory.dream.started"] == kinds["memory.dream.completed"]
    # With the times the store recorded: weeks of history, not the moment of the backfill.
    stamps = [row.timestamp_ms for row in stored]
    assert max(stamps) - min(stamps) >= 14 * DAY_MS
    assert RealmWatermark.objects.get(realm="ops").backfilled

    # A restarted follower tells none of it again, and goes on with what is written next.
    restarted = RealmWatcher(**QUIET)
    assert restarted.poll_once() == []
    with StoreWriter.open("ops", root=agent_memory_dir) as writer:
        fresh = writer.remember(identity_scope("ops", LUKA), "Written after the backfill", "Body")
    assert [(row.event_type, row.data["record_id"]) for row in restarted.poll_once()] == [
        ("memory.record.remembered", fresh)]
    restarted.close()

    # Asked again by hand, nothing is told twice.
    out = StringIO()
    call_command("backfill_timeline", "--realm", "ops", stdout=out)
    assert out.getvalue().startswith("Put 0 events of the last 30 days of 1 realm(s) on the timeline.")
    assert TimelineEvent.objects.count() == len(stored) + 1


def test_only_the_window_is_backfilled(agent_memory_dir: Path, settings):
    settings.MOBKIT_TIMELINE_BACKFILL_DAYS = 30
    clock = ManualClock(wall_clock_ms() - 40 * DAY_MS)
    with StoreWriter.create("default", root=agent_memory_dir, clock=clock) as writer:
        writer.remember(identity_scope("default", LUKA), "Forty days old", "Body")
        clock.set(wall_clock_ms() - 2 * DAY_MS)
        recent = writer.remember(identity_scope("default", LUKA), "Two days old", "Body")

    watcher = RealmWatcher(**QUIET)
    assert [row.data["record_id"] for row in follow_until_caught_up(watcher)] == [recent]

    # A longer window by hand reaches the older write, and only it is new.
    call_command("backfill_timeline", "--days", "60", stdout=StringIO())
    assert TimelineEvent.objects.count() == 2
    assert watcher.poll_once() == []
    watcher.close()


def test_a_watermark_from_before_backfills_gets_its_history_once(agent_memory_dir: Path):
    with StoreWriter.create("default", root=agent_memory_dir) as writer:
        old = writer.remember(identity_scope("default", LUKA), "Skipped by an older console", "Body")
    # An older console marked the realm read at its end without telling its history.
    RealmWatermark.objects.create(realm="default", last_audit_id=1, backfilled=False)

    watcher = RealmWatcher(**QUIET)
    assert [row.data["record_id"] for row in follow_until_caught_up(watcher)] == [old]
    assert watcher.poll_once() == []
    watcher.close()


def test_with_no_window_a_realm_present_at_start_begins_at_its_end(agent_memory_dir: Path, settings):
    settings.MOBKIT_TIMELINE_BACKFILL_DAYS = 0
    with StoreWriter.create("default", root=agent_memory_dir) as writer:
        writer.remember(identity_scope("default", LUKA), "Old fact", "Body")

    assert RealmWatcher(**QUIET).poll_once() == []
    assert RealmWatermark.objects.get(realm="default").last_audit_id == 1


def test_backfill_by_hand_leaves_the_work_to_the_lease_holder(agent_memory_dir: Path):
    with StoreWriter.create("default", root=agent_memory_dir) as writer:
        writer.remember(identity_scope("default", LUKA), "A fact", "Body")
    assert lease_acquire(holder="other-host:1", ttl_ms=60_000)
    out = StringIO()

    call_command("backfill_timeline", "--days", "7", stdout=out)

    assert "(other-host:1)" in out.getvalue() and "in the background" in out.getvalue()
    assert not TimelineEvent.objects.exists()
    request = RealmWatermark.objects.get(realm="default")
    assert (request.backfilled, request.backfill_days) == (False, 7)
    lease_release(holder="other-host:1")


def test_backfill_by_hand_refuses_what_it_cannot_do(agent_memory_dir: Path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--days must be 1 or more"):
        call_command("backfill_timeline", "--days", "0")
    with pytest.raises(CommandError, match="no realm named 'nowhere'"):
        call_command("backfill_timeline", "--realm", "nowhere")


def test_two_processes_put_the_history_on_the_timeline_once(tmp_path: Path):
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    env = deployment_env(state, MOBKIT_TIMELINE_BACKFILL_DAYS="30")
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo", "--realm", "ops", "--no-timeline")

    # Two followers start at once: one holds the lease and backfills, the other stands by.
    both = [subprocess.Popen([PYTHON, "manage.py", "watch_realms", "--once"], cwd=REPO, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for process in both:
        process.communicate(timeout=120)
        assert process.returncode == 0
    # Then restarts, and the command by hand: still once.
    manage(env, "watch_realms", "--once")
    manage(env, "backfill_timeline")

    with sqlite3.connect(f"file:{console_db(env)}?mode=ro", uri=True) as conn:
        kinds = Counter(kind for (kind,) in conn.execute("SELECT event_type FROM timeline_timelineevent"))
        sources = [source for (source,) in conn.execute("SELECT source_event_id FROM timeline_timelineevent")]
    assert record_kinds(kinds) == implied_by_audit(state / "agent-memory" / "ops.sqlite3")
    assert len(sources) == len(set(sources))
