"""Faults while requests run: a realm truncated, overwritten with garbage, deleted and restored.

A real daphne serves two indexed realms to a reader granted one agent (``identity:scout``) while
client threads call the records RPC and page, across realms and per realm, and the test damages
and restores realm ``victim`` in place. Throughout: no response is a 500 or an unexpected error,
realm ``steady`` keeps answering in every all-realm response, no response ever carries a row of
``identity:lead`` (which the reader may not read), and the realm files' bytes are the console's to
read only: ``steady`` never changes and ``victim``, once restored, holds exactly what was restored.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import time
from pathlib import Path

import pytest

from memory_panel.simulator.store_writer import StoreWriter, agent, identity_scope
from tests.support.postures import HEADER, SCOUT, SCOUT_ONLY_RULE
from tests.support.servers import daphne_servers, deployment_env, manage

LEAD = "identity:lead"
SECRET = "LEAD-ONLY-SECRET"
SCOPED = HEADER + SCOUT_ONLY_RULE
# (path, realm asked for alone?) — the all-realm requests must always answer with steady's rows.
RPC_CALLS = [None, "steady", "victim"]
PAGES = ["/console/memory/records/", "/console/memory/records/?realm=steady", "/console/memory/records/?realm=victim"]


def _write_realm(root: Path, name: str, rows: int) -> list[str]:
    ids = []
    with StoreWriter.create(name, root=root) as writer:
        for n in range(rows):
            ids.append(writer.remember(identity_scope(name, SCOUT), f"{name} scout fact {n}", f"scout body {n}"))
            writer.remember(identity_scope(name, LEAD), f"{SECRET} {name} {n}", f"{SECRET} body", author=agent(LEAD))
    return ids


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Load:
    """Client threads calling the console until stopped; every answer is checked as it arrives."""

    def __init__(self, port: int, token: str, steady_ids: set[str]) -> None:
        self.port, self.token, self.steady_ids = port, token, steady_ids
        self.stop = threading.Event()
        self.failures: list[str] = []
        self.answers = 0
        self.victim_unreadable = 0  # answers that reported the damaged realm: the faults were seen
        self.lock = threading.Lock()

    def fail(self, message: str) -> None:
        with self.lock:
            self.failures.append(message[:400])

    def run(self, lane: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Authorization": f"Bearer {self.token}"}
        turn = lane
        while not self.stop.is_set():
            turn += 1
            try:
                if turn % 2:
                    self.rpc(connection, headers, RPC_CALLS[turn // 2 % len(RPC_CALLS)])
                else:
                    self.page(connection, headers, PAGES[turn // 2 % len(PAGES)])
            except (OSError, http.client.HTTPException) as error:
                self.fail(f"connection failed: {error!r}")
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            with self.lock:
                self.answers += 1

    def rpc(self, connection, headers, realm: str | None) -> None:
        params = {"limit": 200, **({"realm": realm} if realm else {})}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "mobkit/memory/panel/records", "params": params})
        connection.request("POST", "/console/rpc", body=body, headers={**headers, "Content-Type": "application/json"})
        response = connection.getresponse()
        raw = response.read()
        if SECRET.encode() in raw:
            self.fail(f"rpc {realm}: a row the reader may not read")
        if response.status != 200 or response.getheader("Content-Type") != "application/json":
            return self.fail(f"rpc {realm}: HTTP {response.status} {raw[:200]!r}")
        reply = json.loads(raw)
        if "error" in reply:
            # Only the damaged realm asked for alone may fail: unreadable (-32001) or, while
            # deleted, unknown (-32602).
            if realm != "victim" or reply["error"]["code"] not in (-32001, -32602):
                self.fail(f"rpc {realm}: {reply['error']}")
            with self.lock:
                self.victim_unreadable += 1
            return None
        ids = {row["id"] for row in reply["result"]["records"]}
        if realm != "victim" and not self.steady_ids <= ids:
            self.fail(f"rpc {realm}: steady's rows missing")

    def page(self, connection, headers, path: str) -> None:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        if SECRET.encode() in raw:
            self.fail(f"page {path}: a row the reader may not read")
        allowed = (200, 503, 400) if path.endswith("victim") else (200,)
        if response.status not in allowed:
            return self.fail(f"page {path}: HTTP {response.status}")
        if response.status == 200 and not path.endswith("victim"):
            missing = [m for m in self.steady_ids if m.encode() not in raw]
            if missing:
                self.fail(f"page {path}: steady's rows missing")


def test_realm_faults_under_load_never_fail_other_realms_or_leak_rows(tmp_path: Path):
    state = tmp_path / "state"
    root = state / "agent-memory"
    (state / "console").mkdir(parents=True)
    steady_ids = set(_write_realm(root, "steady", 3))
    _write_realm(root, "victim", 40)
    steady, victim = root / "steady.sqlite3", root / "victim.sqlite3"
    original = victim.read_bytes()
    steady_before = (_digest(steady), steady.stat().st_mtime_ns)
    access = tmp_path / "access.toml"
    access.write_text(SCOPED, encoding="utf-8")
    env = deployment_env(state, MOBKIT_ACCESS_CONFIG=str(access), MOBKIT_REALM_INDEX_MIN_ROWS="0")
    manage(env, "migrate", "--noinput")
    token = manage(env, "mobkit_token", "reader@example.test").strip().splitlines()[-1]

    with daphne_servers(env, 1) as (server,):
        load = Load(server.port, token, steady_ids)
        threads = [threading.Thread(target=load.run, args=(lane,), daemon=True) for lane in range(6)]
        for thread in threads:
            thread.start()

        def settle() -> None:
            seen = load.answers
            deadline = time.monotonic() + 20
            while load.answers < seen + 30 and time.monotonic() < deadline:
                time.sleep(0.05)

        def restore_in_place() -> None:
            with open(victim, "r+b") as handle:
                handle.truncate(0)
                handle.write(original)

        settle()
        # An emptied access.toml is not among the faults yet: on this branch it still reads as
        # "access control off" (failing closed on it is docs/access.md §2.3, tested in tests/access).
        for fault in ("truncate", "garbage", "delete"):
            if fault == "truncate":
                with open(victim, "r+b") as handle:
                    handle.truncate(len(original) // 3)
            elif fault == "garbage":
                with open(victim, "r+b") as handle:
                    handle.write(b"\x00garbage\xff" * (len(original) // 10))
            else:
                victim.unlink()
            settle()
            if fault == "delete":
                victim.write_bytes(original)
            else:
                restore_in_place()
            settle()
        load.stop.set()
        for thread in threads:
            thread.join(timeout=60)

    assert load.failures == [], load.failures[:10]
    assert load.answers > 200 and load.victim_unreadable > 0
    assert (_digest(steady), steady.stat().st_mtime_ns) == steady_before
    assert victim.read_bytes() == original
