"""bin/demo shows a second agent host's realm, shipped and followed through Litestream, and stops all
it started (docs/demo.md §4, §6)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.litestream import wait_for
from tests.support.servers import end_process, session_cookie, start_demo


def _get(port: int, path: str, cookie: str) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Cookie": cookie})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _processes_of(state: Path) -> list[str]:
    """Command lines of live processes started for this demo: they name its state, or carry it in their environment."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            environ = (entry / "environ").read_bytes().decode(errors="replace")
        except OSError:  # gone meanwhile, or another user's
            continue
        if str(state) in cmdline or str(state) in environ:
            found.append(f"{entry.name}: {cmdline}")
    return found


def _east_event_times(state: Path, *, since_ms: int) -> list[int]:
    """When the east/ops events stored on the console's timeline happened, from ``since_ms`` on."""
    with sqlite3.connect(f"file:{state / 'console' / 'console.sqlite3'}?mode=ro", uri=True) as conn:
        return [stamp for (stamp,) in conn.execute(
            "SELECT timestamp_ms FROM timeline_timelineevent"
            " WHERE json_extract(data, '$.realm') = 'east/ops' AND timestamp_ms >= ?", (since_ms,))]


@contextmanager
def _bin_demo(tmp_path: Path, **settings: str) -> Iterator[tuple[int, Path, str]]:
    """bin/demo on a state of its own and a free port: (port, state, what it printed once serving).
    On leaving, SIGTERM, then every process it started must be gone."""
    demo = start_demo(tmp_path, **settings)
    try:
        assert _processes_of(demo.state), "the demo's processes were not found by their state directory"
        yield demo.port, demo.state, demo.log.read_text()
    finally:
        end_process(demo.process, timeout=30, sig=signal.SIGTERM)
    try:
        wait_for(lambda: not _processes_of(demo.state), timeout_s=15, what="every process bin/demo started to stop")
    except AssertionError:
        raise AssertionError(f"left running after SIGTERM: {_processes_of(demo.state)}") from None


def test_bin_demo_follows_the_east_host_live_and_leaves_nothing_running(tmp_path):
    started_ms = int(time.time() * 1000)
    with _bin_demo(tmp_path, DEMO_INTERVAL="0.5") as (port, state, printed):
        assert "east/ops: put" in printed and "events of their history on the timeline" in printed, printed
        cookie = session_cookie(port, "demo", "demo-console")

        status, page = _get(port, "/console/memory/?realm=east/ops", cookie)
        assert status == 200
        assert "A copy of host <code>east</code>, followed with Litestream" in page

        def current_txid() -> int | None:
            status, body = _get(port, "/console/replicas/health", cookie)
            lags = {lag["realm"]: lag for lag in json.loads(body)["replicas"]}
            east = lags.get("east/ops")
            return east["txid"] if status == 200 and east and east["follower"] == "following" else None

        first = wait_for(current_txid, timeout_s=30, what="east/ops followed and the health answer 200")
        # The east host's own activity keeps writing; each write comes through its copy.
        wait_for(lambda: (current_txid() or 0) > first, timeout_s=30, what="a later write on east in its copy")

        # The east host's weeks of history, and its writes since the demo started, are on the timeline
        # under the qualified name.
        wait_for(lambda: _east_event_times(state, since_ms=started_ms), timeout_s=30,
                 what="an east/ops event written since the demo started, on the timeline")
        assert min(_east_event_times(state, since_ms=0)) < started_ms - 14 * 86_400_000


def test_bin_demo_keeps_an_operators_own_replica_sources(tmp_path):
    sources = "west=file:///srv/replicas/west"
    with _bin_demo(tmp_path, DEMO_ACTIVITY="0", MOBKIT_REPLICA_SOURCES=sources) as (port, state, printed):
        assert "east" not in printed
        assert not (state / "demo-hosts").exists()
        cookie = session_cookie(port, "demo", "demo-console")
        status, body = _get(port, "/console/replicas/health", cookie)
        # The server follows the operator's source (not listed here: no follow_replicas runs), not east.
        assert status == 503
        assert [source["label"] for source in json.loads(body)["source_problems"]] == ["west"]
