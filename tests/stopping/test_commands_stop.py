"""The long-running management commands stop within 5 s of SIGTERM or SIGINT to their whole process
group, even when the signal reaches them again a moment later (as from bin/demo's trap), and leave
nothing half-written (docs/serving.md §7)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_panel.simulator.demo import seed_demo
from tests.support.litestream import LABEL, REALMS, ConsoleHost, Hosts, hosts_start, wait_for
from tests.support.process_groups import integrity, kill_group, stop_group
from tests.support.servers import PYTHON, REPO, deployment_env, manage

SIGNALS = [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGINT, id="SIGINT")]
# The second signal comes while the first is being handled: the moment that once hung them.
AGAIN_AFTER_S = 0.05


def _start(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen:
    with log.open("ab") as sink:
        return subprocess.Popen([PYTHON, "manage.py", *args], cwd=REPO, env=env, stdout=sink,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)


def _stopped(process: subprocess.Popen, sig: int) -> int:
    """Stops the group of ``process`` (asserting it is gone within 5 s) and returns its exit status."""
    try:
        stop_group(process.pid, sig, again_after_s=AGAIN_AFTER_S)
    finally:
        kill_group(process.pid)
    return process.wait(timeout=5)


@pytest.mark.parametrize("sig", SIGNALS)
def test_demo_activity_stops_between_two_actions(tmp_path: Path, sig: int):
    state = tmp_path / "state"
    seed_demo(root=state / "agent-memory")
    log = tmp_path / "activity.log"
    process = _start(deployment_env(state), log, "demo_activity", "--interval", "0.05")
    wait_for(lambda: log.read_text().count("\n") >= 4, timeout_s=30, what=f"a few demo actions: {log}")

    assert _stopped(process, sig) == 0, log.read_text()
    assert "stopped after" in log.read_text().splitlines()[-1]
    for realm_file in (state / "agent-memory").glob("*.sqlite3"):
        assert integrity(realm_file) == "ok", realm_file


@pytest.mark.parametrize("sig", SIGNALS)
def test_watch_realms_stops_and_hands_its_lease_back(tmp_path: Path, sig: int):
    state = tmp_path / "state"
    seed_demo(root=state / "agent-memory")
    (state / "console").mkdir()
    env = deployment_env(state)
    manage(env, "migrate", "--noinput")
    log = tmp_path / "watch.log"
    process = _start(env, log, "watch_realms")
    database = state / "console" / "console.sqlite3"

    def holder() -> str:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
            row = conn.execute("SELECT holder FROM timeline_watcherlease").fetchone()
        return row[0] if row else ""

    wait_for(holder, timeout_s=30, what=f"watch_realms holding the lease: {log}")

    assert _stopped(process, sig) == 0, log.read_text()
    assert holder() == ""
    assert integrity(database) == "ok"


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Iterator[Hosts]:
    """An agent host shipping realms to a file:// store; the console host each test starts is its own."""
    hosts = hosts_start(tmp_path_factory.mktemp("stopping"))
    hosts.console.stop()
    try:
        yield hosts
    finally:
        hosts.stop()


@pytest.mark.parametrize("sig", SIGNALS)
def test_follow_replicas_stops_with_its_litestream_followers(shipped: Hosts, tmp_path: Path, sig: int):
    console = ConsoleHost(tmp_path / "console-state", shipped.store, own_group=True).start()
    for realm in REALMS:
        wait_for(lambda: console.following(f"{LABEL}/{realm}"), timeout_s=30,
                 what=f"follow_replicas following {LABEL}/{realm}: {console.log}")

    assert _stopped(console.process, sig) == 0, console.log.read_text()
    json.loads((console.copies / "followers.json").read_text())  # whole, not cut mid-write
    assert not list(console.copies.glob(".*.partial"))
    for copy in console.copies.glob(f"{LABEL}/*.sqlite3"):
        assert integrity(copy) == "ok", copy
