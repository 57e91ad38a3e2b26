"""The demo tells a believable story: its weeks on the timeline, counters that add up, one TAINT
WALL finding it caused on purpose and explains, sentences that do not repeat (docs/demo.md §5)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command

from access.caller import Caller, access_for
from memory_panel.selectors.tiles import verdict_tiles
from memory_panel.simulator.demo.activity import run_activity
from memory_panel.simulator.demo.phrases import RECENT_TITLES, Phrasebook
from mobkit_console.timeline.models import TimelineEvent
from mobkit_console.timeline.watcher import RealmWatcher

pytestmark = pytest.mark.django_db

DAY_MS = 86_400_000
STORY_VIOLATION = "Book Lisbon visitors near Marquês de Pombal"  # derived from a released record


def test_a_fresh_demo_timeline_holds_weeks_of_its_own_history(agent_memory_dir, client):
    call_command("seed_demo")
    stamps = list(TimelineEvent.objects.values_list("timestamp_ms", flat=True))
    kinds = Counter(TimelineEvent.objects.values_list("event_type", flat=True))

    assert len(stamps) >= 40 and (max(stamps) - min(stamps)) >= 14 * DAY_MS
    assert {"memory.record.remembered", "memory.write.quarantined", "memory.quarantine.verdict",
            "memory.dream.completed", "memory.promotion.pending_gate"} <= set(kinds)
    # A follower that starts afterwards resumes after the history: nothing is told twice.
    watcher = RealmWatcher(broadcast=lambda rows: None)
    try:
        assert watcher.poll_once() == []
    finally:
        watcher.close()
    client.force_login(_user())
    page = client.get("/console/timeline/").content.decode()
    assert "committed" in page
    # A quarantined write names its record, then why (docs/timeline.md §T.8).
    assert "was quarantined: " in page and "(session tainted by" in page


def test_an_agent_hosts_realm_is_written_without_touching_a_console(agent_memory_dir):
    # bin/demo's east host (docs/demo.md §6): its history reaches the console through the replica.
    call_command("seed_demo", "--realm", "ops", "--no-timeline")

    assert (agent_memory_dir / "ops.sqlite3").exists()
    assert not TimelineEvent.objects.exists()


def _user():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("demo-reader", email="demo-reader@example.test")


def _usage(path: Path) -> list[dict]:
    with sqlite3.connect(path) as conn:
        return [json.loads(raw) for (raw,) in conn.execute("SELECT usage_stats FROM records")]


def test_after_many_rounds_counters_add_up_and_taint_wall_tells_only_the_story(agent_memory_dir):
    call_command("seed_demo")
    run_activity(root=agent_memory_dir, realms=["default", "team:blue"], interval=0, rounds=12,
                 stop=threading.Event(), report=lambda line: None, seed=5)

    for name in ("default.sqlite3", "team%3Ablue.sqlite3"):
        for stats in _usage(agent_memory_dir / name):
            assert stats["judged_useful_count"] <= stats["injected_count"] + stats["explicit_recall_count"]
    wall = next(t for t in verdict_tiles(access=access_for(Caller(subject=None)), realm=None) if t.id == "taint-wall")
    assert wall.state == "violated" and wall.evidence_total == 1
    assert wall.lines[0].startswith("1 active with a quarantine in their history (their own, or a record they derive")
    with sqlite3.connect(agent_memory_dir / "default.sqlite3") as conn:
        title = conn.execute("SELECT title FROM records WHERE memory_id=?", (wall.evidence[0].memory_id,)).fetchone()
    assert title == (STORY_VIOLATION,)


def test_holdings_names_the_story_violation_by_title(agent_memory_dir, client):
    call_command("seed_demo")
    client.force_login(_user())
    page = client.get("/console/memory/").content.decode()
    tile = page.split('data-tile="taint-wall"', 1)[1].split("</li>\n    \n", 1)[0]

    assert STORY_VIOLATION in tile and "a record they derive from" in tile


def test_the_phrasebook_does_not_repeat_a_recent_title():
    words = Phrasebook(3)
    titles = [words.note("sess-luka-001").title if n % 3 else words.web_claim("sess-ana-002").title
              for n in range(RECENT_TITLES * 4)]

    for start in range(len(titles) - RECENT_TITLES):
        window = titles[start : start + RECENT_TITLES]
        assert len(set(window)) == len(window)
