"""``GET /healthz`` and ``GET /readyz`` on real server processes (docs/serving.md §6).

Readiness follows PostgreSQL and Redis going away and coming back; neither is the machine's own
(others use those): PostgreSQL is reached through a TCP proxy the test takes away, and Redis is a
``redis-server`` of the test's own.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.litestream import wait_for
from tests.support.postgres import fresh_postgres_database, postgres_missing
from tests.support.redis_server import own_redis, redis_server_missing
from tests.support.servers import Server, deployment_env, start_daphne, start_serve, stop_daphne, stop_serve
from tests.support.tcp_proxy import TcpProxy, tcp_proxy
from tests.support.worlds import write_spread

POD_IP_HOST = "10.1.2.3:8000"  # what a Kubernetes probe sends: in no DJANGO_ALLOWED_HOSTS


def _probe(server: Server, path: str, *, method: str = "GET", host: str | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request(method, path, headers={"Host": host} if host else {})
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


def _ready(server: Server) -> tuple[int, dict]:
    response = _probe(server, "/readyz")
    return response.status, json.loads(response.body)


def _failing(server: Server) -> list[str] | None:
    """The failing checks' names while /readyz answers 503, else None."""
    status, body = _ready(server)
    return [failure["check"] for failure in body["failing"]] if status == 503 else None


def _assert_ready(server: Server) -> dict:
    status, body = wait_for(lambda: (answer := _ready(server))[0] == 200 and answer, timeout_s=10,
                            what="/readyz answering 200")
    assert body["ok"] is True
    return body["checks"]


def _assert_failing_only(server: Server, check: str) -> str:
    """/readyz answers 503 naming ``check`` alone, in exactly the documented shape; returns its error."""
    wait_for(lambda: _failing(server) == [check], timeout_s=10, what=f"/readyz failing on {check} alone")
    status, body = _ready(server)
    assert status == 503
    assert body == {"ok": False, "failing": [{"check": check, "error": body["failing"][0]["error"]}]}
    assert body["failing"][0]["error"]
    assert _probe(server, "/healthz").status == 200  # alive all the same
    return body["failing"][0]["error"]


@contextmanager
def _postgres_through_a_proxy() -> Iterator[tuple[TcpProxy, str]]:
    """A database of the test's own on the machine's PostgreSQL, and its URL through a proxy."""
    with fresh_postgres_database() as database_url:
        real = urlsplit(database_url)
        with tcp_proxy(real.hostname, real.port or 5432) as proxy:
            credentials = real.netloc.rpartition("@")[0]
            yield proxy, real._replace(netloc=f"{credentials}@127.0.0.1:{proxy.port}".lstrip("@")).geturl()


def test_readyz_fails_while_postgres_or_redis_is_away_and_passes_when_they_return(tmp_path: Path):
    reason = postgres_missing() or redis_server_missing()
    if reason:
        pytest.skip(reason)
    state = tmp_path / "state"
    write_spread(state / "agent-memory", "default", records=10, identities=2)
    with _postgres_through_a_proxy() as (postgres, database_url), own_redis(tmp_path) as redis_server:
        server = start_serve(deployment_env(state, DATABASE_URL=database_url, REDIS_URL=redis_server.url), 1)
        try:
            checks = _assert_ready(server)
            assert checks["database"] == checks["migrations"] == checks["redis"] == "ok"

            postgres.stop()
            assert "Connection refused" in _assert_failing_only(server, "database")
            postgres.start()
            _assert_ready(server)

            redis_server.stop()
            assert "Connection refused" in _assert_failing_only(server, "redis")
            redis_server.start()
            _assert_ready(server)
        finally:
            stop_serve(server)


def _threads(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/task").iterdir()))


def test_a_database_that_never_answers_fails_readyz_in_time_on_one_thread(tmp_path: Path):
    reason = postgres_missing()
    if reason:
        pytest.skip(reason)
    state = tmp_path / "state"
    (state / "agent-memory").mkdir(parents=True)
    with _postgres_through_a_proxy() as (postgres, database_url):
        server = start_serve(deployment_env(state, DATABASE_URL=database_url), 1)
        try:
            _assert_ready(server)
            threads = _threads(server.process.pid)
            postgres.hold()
            for _ in range(5):
                started = time.monotonic()
                status, body = _ready(server)
                assert time.monotonic() - started < 4
                assert status == 503 and [f["check"] for f in body["failing"]] == ["database"], body
            assert _threads(server.process.pid) <= threads + 1  # the one check waiting, not one per probe
            postgres.hold(False)
            _assert_ready(server)
        finally:
            stop_serve(server)


def _rows(database: Path, table: str) -> int:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_probes_answer_any_host_with_no_cookie_session_audit_entry_or_log_line(tmp_path: Path):
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    write_spread(state / "agent-memory", "default", records=10, identities=2)
    server = start_serve(deployment_env(state), 1)
    database = state / "console" / "console.sqlite3"
    try:
        assert _probe(server, "/console/login/", host=POD_IP_HOST).status == 400  # Django's host check is on
        _probe(server, "/readyz")  # the first request starts the process's realm follower, which says so once
        time.sleep(1)
        sessions, audit, logged = _rows(database, "django_session"), _rows(database, "audit_auditentry"), server.log.stat().st_size

        for _ in range(10):
            for path in ("/healthz", "/readyz"):
                for host in (POD_IP_HOST, None):
                    response = _probe(server, path, host=host)
                    assert response.status == 200, response.body
                    assert response.getheader("Set-Cookie") is None
                    assert response.getheader("Cache-Control") == "no-store"
                    assert response.getheader("Content-Type") == "application/json"
        assert json.loads(_probe(server, "/healthz").body) == {"ok": True}
        head = _probe(server, "/readyz", method="HEAD")
        assert head.status == 200 and head.body == b""
        refused = _probe(server, "/readyz", method="POST")
        assert refused.status == 405 and refused.getheader("Allow") == "GET, HEAD"

        time.sleep(1)  # audit entries are written off the request, every 0.25 s
        assert _rows(database, "django_session") == sessions
        assert _rows(database, "audit_auditentry") == audit
        assert server.log.stat().st_size == logged, server.log.read_text()[-2000:]
    finally:
        stop_serve(server)


def test_readyz_names_every_failing_check_and_why(tmp_path: Path):
    # Never migrated, its realm directory not there, a replica source no follow_replicas follows.
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    missing = tmp_path / "not-mounted"
    env = deployment_env(state, MOBKIT_AGENT_MEMORY_ROOT=str(missing),
                         MOBKIT_REPLICA_SOURCES=f"east=file://{tmp_path / 'replicas'}")
    server = start_daphne(env, ready_path="/healthz")
    try:
        status, body = _ready(server)
        assert status == 503
        assert set(body) == {"ok", "failing"} and body["ok"] is False
        assert all(set(failure) == {"check", "error"} for failure in body["failing"])
        errors = {failure["check"]: failure["error"] for failure in body["failing"]}
        assert list(errors) == ["migrations", "realms", "replicas"]
        assert "run manage.py migrate" in errors["migrations"]
        assert str(missing) in errors["realms"]
        assert "source east: follow_replicas has never run on this console host" in errors["replicas"]
        assert _probe(server, "/healthz").status == 200
    finally:
        stop_daphne(server)
