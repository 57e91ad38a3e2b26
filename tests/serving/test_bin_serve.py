"""``bin/serve``, the production server: uvicorn workers on one port (docs/serving.md §1, §4).

The two-worker test runs on a PostgreSQL database of its own and on Redis, as a deployment of
several processes (or hosts) would: a session, a token and each timeline event work on every
worker, and each event reaches each socket exactly once.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.support.postgres import fresh_postgres_database, postgres_missing
from tests.support.redis_server import SHARED_REDIS_URL, shared_redis_missing
from tests.support.servers import (
    REPO, Serve, WsClient, deployment_env, manage, post_events, session_cookie, start_serve, stop_serve,
)
from tests.support.worlds import write_spread

def _run_serve(**env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "WORKERS")}
    return subprocess.run([str(REPO / "bin" / "serve")], cwd=REPO, env={**base, **env},
                          capture_output=True, text=True, timeout=60)


def test_several_workers_without_redis_are_refused_with_the_reason():
    result = _run_serve(WORKERS="2", PORT="1")
    assert result.returncode == 2
    assert "WORKERS=2 needs REDIS_URL" in result.stderr
    assert "other workers' pages would go quiet" in result.stderr


@pytest.mark.parametrize("workers", ["0", "two", "-1"])
def test_a_worker_count_that_is_not_a_positive_number_is_refused(workers: str):
    result = _run_serve(WORKERS=workers, PORT="1")
    assert result.returncode == 2
    assert f"WORKERS must be a whole number of 1 or more, not '{workers}'" in result.stderr


def test_a_first_deployment_serves_one_worker_says_how_to_scale_and_makes_the_first_admin_once(tmp_path: Path):
    state = tmp_path / "state"
    (state / "agent-memory").mkdir(parents=True)
    admin = {"DJANGO_SUPERUSER_USERNAME": "admin", "DJANGO_SUPERUSER_EMAIL": "admin@example.test"}
    server = start_serve(deployment_env(state, **admin, DJANGO_SUPERUSER_PASSWORD="first-admin-pw"), workers=None)
    try:
        printed = server.log.read_text()
        assert "(1 worker(s), uvicorn)" in printed and server.worker_pids() == {server.process.pid}
        assert "One worker, since REDIS_URL is not set" in printed and "set REDIS_URL" in printed
        assert "Created the superuser 'admin'." in printed
        assert session_cookie(server.port, "admin", "first-admin-pw")
    finally:
        stop_serve(server)

    # Started again with another password: the admin exists and keeps the first one.
    server = start_serve(deployment_env(state, **admin, DJANGO_SUPERUSER_PASSWORD="second-admin-pw"), workers=None)
    try:
        assert "The user 'admin' exists already: left as it is, password unchanged." in server.log.read_text()
        assert session_cookie(server.port, "admin", "first-admin-pw")
    finally:
        stop_serve(server)
    for log in state.glob("serve-*.log"):
        assert "admin-pw" not in log.read_text(), log


async def _owner(server, client_port: int) -> int | None:
    """The worker holding a just-opened socket; /proc may list it a moment after the handshake."""
    for _ in range(50):
        owner = server.owner_of(client_port)
        if owner is not None:
            return owner
        await asyncio.sleep(0.05)
    return None


def _get(server: Serve, path: str, headers: dict[str, str]) -> tuple[int, bytes, int | None]:
    """A GET on a new connection: status, body, and the worker that answered it."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        owner = server.owner_of(connection.sock.getsockname()[1])
        return response.status, response.read(), owner
    finally:
        connection.close()


def test_a_paused_export_does_not_hold_a_page_thread(tmp_path: Path):
    # One page thread: were exports served from it, a client that stopped reading an export
    # would hold it (the server waits for the socket to drain) and every page would wait behind.
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    write_spread(state / "agent-memory", "default", records=20_000, identities=20)
    env = deployment_env(state, MOBKIT_HTTP_THREADS="1")
    manage(env, "migrate", "--noinput")
    token = manage(env, "mobkit_token", "operator@example.test").strip().splitlines()[-1]
    headers = {"Authorization": f"Bearer {token}"}

    server = start_serve(env, workers=1)
    paused = []
    try:
        for _ in range(2):
            export = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            export.request("GET", "/console/memory/records.ndjson", headers=headers)
            response = export.getresponse()
            assert response.status == 200
            assert response.read(1024)  # the export is under way; this client now stops reading
            paused.append(export)

        status, body, _ = _get(server, "/console/memory/records/", headers)
        assert status == 200 and b"Observation 19999" in body
    finally:
        for export in paused:
            export.close()
        stop_serve(server)


async def test_two_workers_share_sessions_tokens_and_the_timeline_on_postgres_and_redis(tmp_path: Path):
    reason = postgres_missing() or shared_redis_missing()
    if reason:
        pytest.skip(reason)
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    write_spread(state / "agent-memory", "default", records=50, identities=5)
    with fresh_postgres_database() as database_url:
        env = deployment_env(state, REDIS_URL=SHARED_REDIS_URL, DATABASE_URL=database_url)
        manage(env, "migrate", "--noinput")
        token = manage(env, "mobkit_token", "operator@example.test").strip().splitlines()[-1]
        manage(env, "shell", "-c", "from django.contrib.auth.models import User; "
               "User.objects.create_user('ana', password='serve-test-pw')")
        server = await asyncio.to_thread(start_serve, env, 2)
        try:
            assert len(server.worker_pids()) == 2
            # A session made on one worker and a token work on whichever worker answers.
            cookie = await asyncio.to_thread(session_cookie, server.port, "ana", "serve-test-pw")
            answered_by = set()
            for headers in [{"Cookie": cookie}] * 12 + [{"Authorization": f"Bearer {token}"}] * 12:
                status, body, owner = await asyncio.to_thread(_get, server, "/console/memory/records/", headers)
                assert status == 200 and b"Observation 49" in body
                answered_by.add(owner)
            assert answered_by == server.worker_pids()

            # Sockets on both workers; each pushed event reaches each socket once, whichever
            # worker took the push.
            sockets: list[WsClient] = []
            held: set[int] = set()
            while held != server.worker_pids() and len(sockets) < 40:
                client = await WsClient.connect(f"{server.ws}/ws/console/events/?auth_token={token}")
                sockets.append(client)
                held.add(await _owner(server, client.connection.local_address[1]))
            assert held == server.worker_pids()
            await asyncio.sleep(0.5)  # every socket has joined its worker's fan-out

            marker = uuid.uuid4().hex
            stored = []
            for n in range(6):
                event = {"identity": "_system", "event_type": "memory.dream.started", "timestamp_ms": 1_700_000_000_000 + n,
                         "data": {"realm": "default", "run_id": f"{marker}-{n}"}}
                stored += (await asyncio.to_thread(post_events, server, event, env["MOBKIT_INGEST_TOKEN"]))["event_ids"]

            for client in sockets:
                received = [e["event_id"] for e in await client.events(quiet_s=1.5)
                            if e["data"].get("run_id", "").startswith(marker)]
                assert received == stored
                await client.close()
        finally:
            await asyncio.to_thread(stop_serve, server)
