"""A realm whose follower never reaches follow mode has no copy, so no page lists it: it is flagged
on the health answer and Holdings all the same (docs/replicas.md §5)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from memory_panel.conf import replica_copies_root
from memory_panel.replicas import STATUS_FILE, Supervisor, litestream_binary
from tests.support.litestream import unrestorable_database, wait_for
from tests.support.worlds import write_notes

pytestmark = pytest.mark.django_db


def test_a_realm_whose_restore_keeps_failing_fails_the_health_check_and_shows_on_holdings(
    agent_memory_dir: Path, settings, console
):
    write_notes(agent_memory_dir, "local", 1)
    source = agent_memory_dir.parent / "east-replica"
    for name in ("broken.sqlite3", "team%3Ablue.sqlite3"):
        unrestorable_database(source, name)
    settings.MOBKIT_REPLICA_SOURCES = {"east": f"file://{source}"}
    supervisor = Supervisor(sources=settings.MOBKIT_REPLICA_SOURCES, copies_root=replica_copies_root(),
                            binary=litestream_binary(), interval_ms=1000)
    supervisor.watches[0].list_once()

    def restarting() -> bool:
        supervisor.step()  # what follow_replicas does every second: a dead follower is noted as restarting
        copies = json.loads((replica_copies_root() / STATUS_FILE).read_text())["copies"]
        return len(copies) == 2 and all(copy["state"] == "restarting" for copy in copies.values())

    try:
        wait_for(restarting, timeout_s=20, what="both followers failing their restore", every_s=0.2)
    finally:
        for follower in supervisor.followers.values():
            follower.stop()

    answer = console.get("/console/replicas/health")
    assert answer.status_code == 503
    body = answer.json()
    assert body["ok"] is False and body["source_problems"] == []
    assert body["stale"] == ["east/broken", "east/team:blue"]
    for lag in body["replicas"]:
        assert (lag["follower"], lag["stale"], lag["txid"], lag["source_txid"], lag["current_at_ms"]) == (
            "restarting", True, None, 1, None)
        assert lag["problem"].startswith("never copied: its follower has not reached follow mode and is restarting")
        assert "invalid LTX file" in lag["problem"]
    holdings = console.get("/console/memory/").content.decode()
    assert "These realms of other hosts have no copy to serve" in holdings
    assert "<code>east/broken</code>: never copied: its follower has not reached follow mode" in holdings
    assert "<code>east/team:blue</code>" in holdings


def test_a_realm_restoring_its_first_copy_is_flagged_until_it_follows(agent_memory_dir: Path, settings, console):
    settings.MOBKIT_REPLICA_SOURCES = {"east": "file:///srv/replicas/east"}
    root = replica_copies_root()
    root.mkdir(parents=True)
    now_ms = time.time_ns() // 1_000_000
    (root / STATUS_FILE).write_text(json.dumps({
        "pid": 1, "written_at_ms": now_ms, "follow_interval_ms": 1000,
        "sources": {"east": {"error": None, "listed_at_ms": now_ms, "list_every_s": 1.0}},
        "copies": {"east/default": {"state": "restoring", "pid": 2, "since_ms": now_ms, "restarts": 0,
                                    "last_error": None, "source_txid": 7, "source_listed_at_ms": now_ms}},
    }))
    answer = console.get("/console/replicas/health")
    assert (answer.status_code, answer.json()["stale"]) == (503, ["east/default"])
    assert answer.json()["replicas"][0]["problem"] == "never copied: its follower is restoring the first copy"
