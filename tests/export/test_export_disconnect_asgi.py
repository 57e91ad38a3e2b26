"""Through bin/serve (ASGI), a client that stops reading holds the export, and one that disconnects
mid-export leaves no walk and no realm connection open.

The export is pulled a piece at a time (memory_panel/views/export.py); the realm file is held open
by the walk only. The server's open descriptors on the realm file show what is running. uvicorn
waits for a slow client's socket before taking the next piece; daphne (runserver, bin/demo) writes
into an unbounded buffer instead, so under it an export runs on into memory while its client does
not read (docs/serving.md §2), and only bin/serve is held to the first promise here.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from tests.support.servers import deployment_env, manage, start_serve, stop_serve

pytestmark = pytest.mark.django_db(transaction=True)


def realm_descriptors(pids: set[int], realm_file: Path) -> int:
    count = 0
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) == str(realm_file):
                    count += 1
            except OSError:
                continue
    return count


def wait_for(predicate, timeout_s: float = 15) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_disconnect_mid_stream_closes_the_walk(tmp_path):
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    # No index build and no embedded realm follower: only the export may open the realm file here.
    env = deployment_env(state, MOBKIT_REALM_INDEX_MIN_ROWS="1000000", MOBKIT_TIMELINE_FOLLOW_REALMS="0")
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo", "--realm", "default", "--records", "20000")
    token = manage(env, "mobkit_token", "exporter").strip().splitlines()[-1]
    realm_file = (state / "agent-memory" / "default.sqlite3").resolve()
    server = start_serve(env, 1)
    try:
        workers = server.worker_pids()
        baseline = realm_descriptors(workers, realm_file)
        with socket.create_connection(("127.0.0.1", server.port)) as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            client.sendall(
                f"GET /console/memory/records.ndjson?realm=default HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {token}\r\n\r\n".encode()
            )
            head = client.recv(4096)
            assert head.startswith(b"HTTP/1.1 200")
            assert wait_for(lambda: realm_descriptors(workers, realm_file) > baseline)
            time.sleep(3)  # not reading: the export waits for the client instead of running on
            assert realm_descriptors(workers, realm_file) > baseline
        # Gone mid-stream: 20,000 rows are far more than the few KB read.
        assert wait_for(lambda: realm_descriptors(workers, realm_file) <= baseline)
    finally:
        stop_serve(server)
