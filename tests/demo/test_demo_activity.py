"""``demo_activity``: every kind of runtime activity over real demo realm files, and only those."""

from __future__ import annotations

import hashlib
import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memory_panel.simulator.demo.cast import TAINT_WEB
from memory_panel.simulator.demo.marker import is_demo_realm
from memory_panel.simulator.store_writer import identity_scope
from tests.support.servers import PYTHON, REPO, deployment_env

# seed_demo puts the realms' history on the timeline, in the console's database (docs/demo.md §5).
pytestmark = pytest.mark.django_db


def rows(path: Path, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchall()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def audit_after(path: Path, audit_id: int) -> list[tuple[str, str, str, dict]]:
    """(stage_token, op_kind, memory_id, detail) of the audit rows past ``audit_id``."""
    return [(token, kind, memory_id, json.loads(detail)) for token, kind, memory_id, detail in rows(
        path, "SELECT stage_token, op_kind, memory_id, detail FROM audit WHERE audit_id > ? ORDER BY audit_id",
        audit_id)]


def start_activity(agent_memory_dir: Path, *args: str) -> subprocess.Popen:
    """``manage.py demo_activity`` as its own process, as ``bin/demo`` runs it."""
    return subprocess.Popen([PYTHON, "manage.py", "demo_activity", *args], cwd=REPO,
                            env=deployment_env(agent_memory_dir.parent), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.fixture
def seeded(agent_memory_dir: Path) -> Path:
    call_command("seed_demo")
    return agent_memory_dir / "default.sqlite3"


def test_one_round_writes_each_kind_of_runtime_activity(seeded, agent_memory_dir):
    before = rows(seeded, "SELECT MAX(audit_id), (SELECT MAX(injection_id) FROM injections),"
                          " (SELECT COUNT(*) FROM pending_promotions) FROM audit")[0]
    blue = digest(agent_memory_dir / "team%3Ablue.sqlite3")
    call_command("demo_activity", "--once", "--interval", "0", "--realm", "default", "--seed", "11")
    audit = audit_after(seeded, before[0])
    by_agent = [(kind, detail) for _, kind, _, detail in audit if detail["author"]["author"] == "agent"]
    # agents remembering and updating, in their own identity scopes
    assert ("create", None) in {(kind, d["quarantined"]) for kind, d in by_agent}
    assert "supersede" in {kind for kind, _ in by_agent}
    # a web-tainted session's write, quarantined by the write gate
    quarantined = [d for kind, d in by_agent if d["quarantined"] == TAINT_WEB]
    assert quarantined and quarantined[0]["op"] == "create"
    # a reviewer's verdict: one review batch by an operator
    reviews = {d["review"]["verdict"] for token, _, _, d in audit if token.startswith("review-")}
    assert len(reviews) == 1 and reviews <= {"release", "tombstone"}
    assert {d["review"]["reviewer"]["kind"] for token, _, _, d in audit if token.startswith("review-")} == {"operator"}
    # a steward dream: its audit rows, its run sheet, its usage verdicts
    runs = rows(seeded, "SELECT run_id, ops_committed, detail FROM dream_runs WHERE started_at_ms >="
                        " (SELECT applied_at_ms FROM audit WHERE audit_id = ?)", before[0] + 1)
    assert len(runs) == 1
    run_id, ops_committed, detail = runs[0]
    gated = {token for (token,) in rows(seeded, "SELECT stage_token FROM pending_promotions")}
    steward = {"author": "steward", "run_id": run_id}
    dream_ops = [kind for token, kind, _, d in audit if d["author"] == steward and token not in gated]
    assert "set_rank" in dream_ops and "create" in dream_ops
    assert ops_committed == len(dream_ops)
    assert json.loads(detail)["verdicts"]["proposals_gated"] >= 1
    assert rows(seeded, "SELECT verdict FROM dream_audit_verdicts WHERE run_id=?", run_id) == [("dead_weight",)]
    # a gated promotion: staged by the dream, approved by an operator, its staged batch committed
    gates = rows(seeded, "SELECT stage_token, status FROM pending_promotions ORDER BY rowid LIMIT -1 OFFSET ?",
                 before[2])
    committed = [token for token, status in gates if status == "committed"]
    assert committed and committed[0] in {token for token, *_ in audit}
    # injections at build and on a turn
    assert {s for (s,) in rows(seeded, "SELECT surface FROM injections WHERE injection_id > ?", before[1])} == {
        "build", "turn"}
    # the file is still a sound demo realm, and the other realm was not touched
    assert rows(seeded, "PRAGMA integrity_check") == [("ok",)]
    assert is_demo_realm(seeded)
    assert digest(agent_memory_dir / "team%3Ablue.sqlite3") == blue


def test_without_realm_every_demo_realm_moves_and_other_files_stay_untouched(seeded, agent_memory_dir,
                                                                           realm_writer):
    plain = realm_writer("plain")
    plain.remember(identity_scope("plain", "identity:luka"), "A runtime's own note", "Written by MobKit.")
    plain.close()
    untouched = digest(agent_memory_dir / "plain.sqlite3")
    counts = {name: rows(agent_memory_dir / name, "SELECT COUNT(*) FROM audit")[0][0]
              for name in ("default.sqlite3", "team%3Ablue.sqlite3")}
    call_command("demo_activity", "--once", "--interval", "0")
    for name, count in counts.items():
        assert rows(agent_memory_dir / name, "SELECT COUNT(*) FROM audit")[0][0] > count
    assert digest(agent_memory_dir / "plain.sqlite3") == untouched


def test_refuses_a_realm_file_seed_demo_did_not_create(agent_memory_dir, realm_writer):
    writer = realm_writer("default")
    writer.remember(identity_scope("default", "identity:luka"), "A runtime's own note", "Written by MobKit.")
    writer.close()
    before = digest(agent_memory_dir / "default.sqlite3")
    with pytest.raises(CommandError, match="realm 'default' .* has no demo marker"):
        call_command("demo_activity", "--once", "--interval", "0", "--realm", "default")
    with pytest.raises(CommandError, match="no demo realms under"):
        call_command("demo_activity", "--once", "--interval", "0")
    assert digest(agent_memory_dir / "default.sqlite3") == before


def test_sigterm_mid_run_stops_between_actions_and_leaves_the_file_consistent(seeded, agent_memory_dir):
    process = start_activity(agent_memory_dir, "--interval", "0.05", "--realm", "default")
    lines = []
    try:
        while len(lines) < 12:  # past the first dream and into the second round
            line = process.stdout.readline()
            assert line, process.stderr.read()
            lines.append(line)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "stopped after" in out.splitlines()[-1]
    assert rows(seeded, "PRAGMA integrity_check") == [("ok",)]
    # no half-written action: every batch has all its ops, every steward run its sheet,
    # every live gate its staged batch
    for token, count, top in rows(seeded, "SELECT stage_token, COUNT(*), MAX(op_index) FROM audit"
                                          " GROUP BY stage_token"):
        assert count == top + 1, token
    runs = {json.loads(d)["author"]["run_id"] for (d,) in rows(
        seeded, "SELECT detail FROM audit WHERE detail LIKE '%\"author\":\"steward\"%'")}
    assert runs <= {r for (r,) in rows(seeded, "SELECT run_id FROM dream_runs")}
    assert rows(seeded, "SELECT pending_id FROM pending_promotions WHERE status='pending'"
                        " AND stage_token NOT IN (SELECT token FROM stage)") == []


def test_a_long_interval_ends_at_once_on_sigterm(seeded, agent_memory_dir):
    process = start_activity(agent_memory_dir, "--interval", "60")
    try:
        assert "remembered" in process.stdout.readline() + process.stdout.readline()
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=20)
    finally:
        process.kill()
    assert time.monotonic() - started < 10
    assert "stopped after 1 actions" in out
