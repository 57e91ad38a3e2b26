"""Servers the tests start: real daphne processes (multi-process and browser timeline tests), a
small WebSocket client, and a raw TCP server answering fixed bytes (the ledger health checks).

Each daphne server is ``daphne mobkit_console.asgi:application`` in a subprocess, pointed at a console
database and a persistent_state directory under the test's tmp_path, so they share what a real
deployment's processes share.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import websockets



REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def deployment_env(state: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "MOBKIT_", "REDIS_URL", "DATABASE_URL"))}
    env.update({
        "DJANGO_SETTINGS_MODULE": "mobkit_console.settings",
        "MOBKIT_PERSISTENT_STATE": str(state),
        "DATABASE_URL": f"sqlite:///{state / 'console' / 'console.sqlite3'}",
        "MOBKIT_INGEST_TOKEN": "multi-process-ingest-secret",
        "PYTHONUNBUFFERED": "1",
        # A realm written before the server starts stays off the timeline, so a journey sees only
        # the events it causes; the history backfill has tests of its own (tests/timeline/test_backfill.py).
        "MOBKIT_TIMELINE_BACKFILL_DAYS": "0",
        **extra,
    })
    return env


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run([PYTHON, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed: {result.stderr}")
    return result.stdout


def console_with_token(state: Path, subject: str, **extra: str) -> tuple[dict[str, str], str]:
    """A migrated console in ``state`` (its environment with ``extra``) and a console token for ``subject``."""
    (state / "console").mkdir(parents=True, exist_ok=True)
    env = deployment_env(state, **extra)
    manage(env, "migrate", "--noinput")
    return env, manage(env, "mobkit_token", subject).strip().splitlines()[-1]


def deployment_with_reader(state: Path, password: str) -> dict[str, str]:
    """A migrated console in ``state`` (its environment) with one user, ``reader@example.test``."""
    (state / "console").mkdir(parents=True, exist_ok=True)
    env = deployment_env(state)
    manage(env, "migrate", "--noinput")
    manage(env, "shell", "-c",
           "from django.contrib.auth import get_user_model; "
           f"get_user_model().objects.create_user('reader', email='reader@example.test', password='{password}')")
    return env


@dataclass
class Server:
    """A console server process the tests started, on 127.0.0.1:``port``, logging to ``log``."""

    port: int
    process: subprocess.Popen
    log: Path

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def pids(self) -> set[int]:
        """The processes that serve requests (their CPU time is what the server spends)."""
        return {self.process.pid}

    def cpu_seconds(self) -> float:
        """User plus system CPU time the serving processes have used so far (Linux /proc)."""
        return sum(cpu_seconds(pid) for pid in self.pids())


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Daphne(Server):
    """``daphne mobkit_console.asgi:application``: one process."""


def start_daphne(env: dict[str, str], port: int | None = None, *, ready_path: str = "/console/login/") -> Daphne:
    """One daphne on ``port`` (a free one by default), answering ``ready_path`` when this returns."""
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
        wait_http_ready(port, process, log, path=ready_path)
    except BaseException:
        stop_daphne(server)
        raise
    return server


def end_process(process: subprocess.Popen | None, *, timeout: float, sig: int = signal.SIGTERM) -> None:
    """Ask ``process`` to end with ``sig``; kill it if it has not within ``timeout`` seconds."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stop_daphne(server: Daphne) -> None:
    end_process(server.process, timeout=10)


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


class Serve(Server):
    """``bin/serve`` in its own process group: uvicorn's supervisor and its ``workers`` processes."""
    def pids(self) -> set[int]:
        return self.worker_pids()

    def worker_pids(self) -> set[int]:
        """The processes serving the app: the children uvicorn's supervisor spawned (not its resource
        tracker), or uvicorn itself when it runs one worker in its own process."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        spawned = {int(pid) for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()}
        return spawned or {self.process.pid}

    def owner_of(self, client_port: int) -> int | None:
        """The worker holding the connection whose client end is ``client_port`` (Linux /proc)."""
        inodes = _socket_inodes_by_remote_port(self.port)
        inode = inodes.get(client_port)
        for pid in self.worker_pids():
            try:
                links = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            except OSError:
                continue
            if f"socket:[{inode}]" in links:
                return pid
        return None


def _socket_inodes_by_remote_port(local_port: int) -> dict[int, str]:
    """Established TCP connections to ``local_port``: the client's port → the socket's inode."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if int(local.rsplit(":", 1)[1], 16) == local_port and fields[3] == "01":
                found[int(remote.rsplit(":", 1)[1], 16)] = inode
    return found


def start_serve(
    env: dict[str, str], workers: int | None, port: int | None = None, wrapper: Sequence[str] = ()
) -> Serve:
    """``bin/serve`` with ``workers`` (None: as many as it chooses) on ``port`` (a free one by
    default), ready to answer when this returns; ``wrapper`` is a command that runs it (its last
    argument), such as one that changes its mounts first."""
    port = port or free_port()
    log = Path(env["MOBKIT_PERSISTENT_STATE"]) / f"serve-{port}.log"
    chosen = {} if workers is None else {"WORKERS": str(workers)}
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [*wrapper, str(REPO / "bin" / "serve")], cwd=REPO, stdout=sink, stderr=sink, start_new_session=True,
            # No metrics process unless the test asks for one (METRICS_PORT): tests run side by side.
            env={"METRICS_PORT": "0", **{k: v for k, v in env.items() if k != "WORKERS"}, "PORT": str(port), **chosen},
        )
    server = Serve(port, process, log)
    try:
        wait_http_ready(port, process, log, timeout_s=120)
    except BaseException:
        stop_serve(server)
        raise
    return server


def stop_serve(server: Serve) -> None:
    try:
        os.killpg(server.process.pid, signal.SIGTERM)
        server.process.wait(timeout=30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait()


@dataclass
class Demo:
    """``bin/demo`` in a process group of its own, serving on 127.0.0.1:``port`` from ``state``."""

    process: subprocess.Popen
    port: int
    state: Path
    log: Path  # what it printed


def start_demo(base: Path, **settings: str) -> Demo:
    """``bin/demo`` on a state under ``base`` and a free port, answering when this returns."""
    state = base / "state"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "MOBKIT_", "DATABASE_URL", "REDIS_URL"))}
    env.update({"MOBKIT_PERSISTENT_STATE": str(state), "PORT": str(port), **settings})
    log = base / "demo.log"
    with log.open("wb") as out:
        process = subprocess.Popen([str(REPO / "bin" / "demo")], cwd=REPO, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_http_ready(port, process, log, timeout_s=180)
    except BaseException:
        end_process(process, timeout=30)
        raise
    return Demo(process, port, state, log)


def wait_http_ready(port: int, process: subprocess.Popen, log: Path, timeout_s: float = 30,
                    path: str = "/console/login/") -> None:
    """Block until the server on ``port`` answers ``path`` (its sign-in page); its log in the error otherwise."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text(errors='replace')}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the server on port {port} did not come up: {log.read_text(errors='replace')[-2000:]}")


def session_cookie(port: int, username: str, password: str) -> str:
    """The session cookie header a browser would hold after signing in on the form."""
    origin = f"http://127.0.0.1:{port}"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", "/console/login/")
    response = connection.getresponse()
    form = response.read().decode()
    csrf = SimpleCookie(response.getheader("Set-Cookie"))["csrftoken"].value
    middleware_token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    body = urlencode({"username": username, "password": password, "csrfmiddlewaretoken": middleware_token})
    connection.request("POST", "/console/login/", body=body, headers={
        "Content-Type": "application/x-www-form-urlencoded", "Cookie": f"csrftoken={csrf}",
        "Origin": origin, "Referer": f"{origin}/console/login/",
    })
    response = connection.getresponse()
    response.read()
    connection.close()
    assert response.status == 302, response.status
    cookies = SimpleCookie()
    for header in response.msg.get_all("Set-Cookie"):
        cookies.load(header)
    return f"sessionid={cookies['sessionid'].value}"


def post_events(server: Server, body: Any, token: str) -> dict[str, Any]:
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


def console_db(env: dict[str, str]) -> Path:
    return Path(env["DATABASE_URL"].removeprefix("sqlite:///"))


def wait_following(env: dict[str, str], realm: str, timeout_s: float = 15) -> str:
    """Block until some server process holds the watcher lease and has marked ``realm``'s end.

    Writes before that moment would count as the realm's old history, which is never replayed.
    Returns the lease holder.
    """
    import sqlite3

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(f"file:{console_db(env)}?mode=ro", uri=True) as conn:
                holder = conn.execute("SELECT holder FROM timeline_watcherlease WHERE holder != ''").fetchone()
                marked = conn.execute("SELECT 1 FROM timeline_realmwatermark WHERE realm = ?", (realm,)).fetchone()
        except sqlite3.Error:
            holder = marked = None
        if holder and marked:
            return holder[0]
        time.sleep(0.05)
    raise RuntimeError(f"no server process began following realm {realm!r}")


class SseClient:
    """``GET /console/events/stream`` over a raw HTTP/1.0 connection (no chunked encoding to undo)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, server: Daphne, token: str, query: str = "") -> SseClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        path = f"/console/events/stream?auth_token={token}" + (f"&{query}" if query else "")
        writer.write(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        status = await asyncio.wait_for(reader.readline(), 10)
        if b" 200 " not in status:
            raise RuntimeError(f"event stream refused: {status!r}")
        while (await reader.readline()).strip():
            pass  # the response headers
        return cls(reader, writer)

    async def next_event(self) -> dict[str, Any]:
        """The next event's envelope (comments and replay_unavailable skipped)."""
        fields: dict[str, str] = {}
        while True:
            line = (await self.reader.readline()).decode().rstrip("\n")
            if not line and fields:
                if "id" in fields:
                    return json.loads(fields["data"])
                fields = {}
            elif line and not line.startswith(":"):
                name, _, value = line.partition(": ")
                fields[name] = value

    async def events(self, *, quiet_s: float) -> list[dict[str, Any]]:
        """Event envelopes until none arrives for ``quiet_s``."""
        out: list[dict[str, Any]] = []
        while True:
            try:
                out.append(await asyncio.wait_for(self.next_event(), quiet_s))
            except asyncio.TimeoutError:
                return out

    async def close(self) -> None:
        self.writer.close()


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
