"""bin/demo shows a second agent host's realm, shipped and followed through Litestream, and stops all
it started (docs/demo.md §4, §6)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.servers import REPO, end_process, free_port, session_cookie, wait_http_ready


def _get(port: int, path: str, cookie: str) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Cookie": cookie})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _wait_for(check: Callable[[], Any], *, timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.25)
    raise AssertionError(f"waited {timeout_s} s for {what}")


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


def test_bin_demo_follows_the_east_host_live_and_leaves_nothing_running(tmp_path):
    state = tmp_path / "state"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "MOBKIT_", "DATABASE_URL", "REDIS_URL"))}
    env.update({"MOBKIT_PERSISTENT_STATE": str(state), "PORT": str(port), "DEMO_INTERVAL": "0.5"})
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        demo = subprocess.Popen(["bin/demo"], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        wait_http_ready(port, demo, log, timeout_s=180)
        printed = log.read_text()
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

        first = _wait_for(current_txid, timeout_s=30, what="east/ops followed and the health answer 200")
        # The east host's own activity keeps writing; each write comes through its copy.
        _wait_for(lambda: (current_txid() or 0) > first, timeout_s=30, what="a later write on east in its copy")

        # The east host's history, and its live writes, are on the timeline under the qualified name.
        _, timeline = _get(port, "/console/timeline/", cookie)
        assert "east/ops" in timeline
        assert _processes_of(state), "the demo's processes were not found by their state directory"
    finally:
        end_process(demo, timeout=30, sig=signal.SIGTERM)

    _wait_for(lambda: not _processes_of(state), timeout_s=15,
              what=f"every process bin/demo started to stop: {_processes_of(state)}")
