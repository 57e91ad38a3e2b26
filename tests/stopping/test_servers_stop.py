"""``bin/serve`` and ``bin/demo`` stop within 5 s of SIGTERM or SIGINT to their whole process group,
with nothing left running and nothing half-written; the server closes its sockets with the code the
pages reconnect on (docs/serving.md §7)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
import websockets

from tests.support.litestream import wait_for
from tests.support.process_groups import integrity, kill_group, stop_group
from tests.support.redis_server import SHARED_REDIS_URL, shared_redis_missing
from tests.support.servers import (
    SseClient, WsClient, deployment_env, manage, start_demo, start_serve, stop_serve,
)
from tests.support.worlds import write_spread

SIGNALS = [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGINT, id="SIGINT")]
# uvicorn's close code on shutdown: 1012, "service restart".
SERVICE_RESTART = 1012


async def _close_code(client: WsClient) -> int | None:
    """The code the server closed ``client`` with (frames before it are skipped)."""
    try:
        while True:
            await asyncio.wait_for(client.connection.recv(), 10)
    except websockets.ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None


async def _stream_ended(stream: SseClient) -> bool:
    try:
        while await asyncio.wait_for(stream.reader.readline(), 10):
            pass
    except ConnectionError:
        pass
    return True


@pytest.mark.parametrize("sig", SIGNALS)
async def test_bin_serve_closes_sockets_to_reconnect_and_is_gone_within_5_s(tmp_path: Path, sig: int):
    reason = shared_redis_missing()
    if reason:
        pytest.skip(reason)
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    write_spread(state / "agent-memory", "default", records=20, identities=2)
    env = deployment_env(state, REDIS_URL=SHARED_REDIS_URL)  # two workers need it
    manage(env, "migrate", "--noinput")
    token = manage(env, "mobkit_token", "operator@example.test").strip().splitlines()[-1]
    server = await asyncio.to_thread(start_serve, env, 2)
    try:
        socket = await WsClient.connect(f"{server.ws}/ws/console/events/?auth_token={token}")
        stream = await SseClient.connect(server, token)
        await asyncio.sleep(0.5)

        stopping = asyncio.create_task(asyncio.to_thread(stop_group, server.process.pid, sig))
        assert await _close_code(socket) == SERVICE_RESTART
        assert await _stream_ended(stream)
        await stopping  # every process of the group gone within 5 s
    finally:
        await asyncio.to_thread(stop_serve, server)
    assert integrity(state / "console" / "console.sqlite3") == "ok"


def _demo_databases(state: Path) -> list[Path]:
    return [*state.glob("agent-memory/*.sqlite3"), *state.glob("demo-hosts/east/agent-memory/*.sqlite3"),
            *state.glob("console/replicas/east/*.sqlite3"), state / "console" / "console.sqlite3"]


@pytest.mark.parametrize("sig", SIGNALS)
def test_bin_demo_and_everything_it_started_are_gone_within_5_s(tmp_path: Path, sig: int):
    demo = start_demo(tmp_path, DEMO_INTERVAL="0.5")
    try:
        # Every kind of process it starts is running: the east host's litestream, the follower's.
        wait_for(lambda: (demo.state / "console" / "replicas" / "east" / "ops.sqlite3").exists(),
                 timeout_s=60, what=f"east/ops copied by follow_replicas: {demo.log}")
        stop_group(demo.process.pid, sig)
    finally:
        kill_group(demo.process.pid)
        demo.process.wait(timeout=10)
    databases = _demo_databases(demo.state)
    assert len(databases) >= 5, databases
    for database in databases:
        assert integrity(database) == "ok", database
