"""Servers the tests start: real daphne processes (multi-process and browser timeline tests), a
small WebSocket client, and a raw TCP server answering fixed bytes (the ledger health checks).

Each daphne server is ``daphne mobkit_console.asgi:application`` in a subprocess, pointed at a console
database and a persistent_state directory under the test's tmp_path, so they share what a real
deployment's processes share.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import websockets



REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def deployment_env(state: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "MOBKIT_", "REDIS_URL", "DATABASE_URL"))}
    env.update(
        DJANGO_SETTINGS_MODULE="mobkit_console.settings",
        MOBKIT_PERSISTENT_STATE=str(state),
        DATABASE_URL=f"sqlite:///{state / 'console' / 'console.sqlite3'}",
        MOBKIT_INGEST_TOKEN="multi-process-ingest-secret",
        PYTHONUNBUFFERED="1",
        **extra,
    )
    return env


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run([PYTHON, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed: {result.stderr}")
    return result.stdout


@dataclass
class Daphne:
    port: int
    process: subprocess.Popen
    log: Path

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"


def start_daphne(env: dict[str, str], port: int | None = None) -> Daphne:
    """One daphne on ``port`` (a free one by default), ready to answer when this returns."""
    port = port or free_port()
    # A file, not a pipe: a long run's log must never fill a pipe and stall the server.
    log = Path(env["MOBKIT_PERSISTENT_STATE"]) / f"daphne-{port}.log"
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [PYTHON, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "mobkit_console.asgi:application"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=sink,
        )
    server = Daphne(port, process, log)
    try:
        _wait_ready(server)
    except BaseException:
        stop_daphne(server)
        raise
    return server


def stop_daphne(server: Daphne) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@contextmanager
def daphne_servers(env: dict[str, str], count: int) -> Iterator[list[Daphne]]:
    servers: list[Daphne] = []
    try:
        for _ in range(count):
            servers.append(start_daphne(env))
        yield servers
    finally:
        for server in servers:
            stop_daphne(server)


def _wait_ready(server: Daphne, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"daphne exited: {server.log.read_text(errors='replace')}")
        try:
            urllib.request.urlopen(f"{server.http}/console/login/", timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"daphne on port {server.port} did not come up")


def post_events(server: Daphne, body: Any, token: str) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{server.http}/console/events", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


class WsClient:
    """A WebSocket client (the ``websockets`` library: autobahn's asyncio flavour cannot load in a
    process where daphne already chose Twisted)."""

    def __init__(self, connection: websockets.ClientConnection) -> None:
        self.connection = connection

    @classmethod
    async def connect(cls, url: str) -> WsClient:
        return cls(await websockets.connect(url, open_timeout=10, max_queue=None))

    async def events(self, *, quiet_s: float) -> list[dict[str, Any]]:
        """Event frames until none arrives for ``quiet_s`` (keep-alives skipped)."""
        out = []
        while True:
            try:
                text = await asyncio.wait_for(self.connection.recv(), quiet_s)
            except (asyncio.TimeoutError, websockets.ConnectionClosed):
                return out
            frame = json.loads(text)
            if frame["type"] == "event":
                out.append(frame["event"])

    async def close(self) -> None:
        await self.connection.close()


class RawServer:
    """A one-connection-at-a-time TCP server answering every request with fixed bytes."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.requests: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.requests.append(conn.recv(4096))
                conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()
