"""Traces: spans reach an OTLP/HTTP collector when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, and without
it no process imports opentelemetry at all (docs/serving.md §8)."""

from __future__ import annotations

import asyncio
import http.client
import json
import subprocess
from pathlib import Path

from tests.support.otlp import otlp_receiver
from tests.support.redis_server import SHARED_REDIS_URL, shared_redis_missing
from tests.support.servers import PYTHON, REPO, Serve, WsClient, console_with_token, post_events, start_serve, stop_serve
from tests.support.worlds import write_spread


def _console(tmp_path: Path, **extra: str) -> tuple[dict[str, str], str]:
    state = tmp_path / "state"
    write_spread(state / "agent-memory", "default", records=30, identities=3)
    return console_with_token(state, "tracer@example.test", **extra)


def _request(server: Serve, method: str, path: str, token: str, body: dict | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        connection.request(method, path, body=json.dumps(body) if body else None,
                           headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


async def test_with_an_endpoint_each_worker_exports_request_rpc_realm_query_and_socket_spans(tmp_path: Path):
    redis_up = shared_redis_missing() is None
    with otlp_receiver() as collector:
        extra = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}
        if redis_up:
            extra["REDIS_URL"] = SHARED_REDIS_URL
        env, token = _console(tmp_path, **extra)
        server = await asyncio.to_thread(start_serve, env, 2 if redis_up else 1)
        try:
            assert await asyncio.to_thread(_request, server, "GET", "/console/memory/records/?realm=default", token) == 200
            call = {"jsonrpc": "2.0", "id": 1, "method": "mobkit/memory/panel/records", "params": {"realm": "default"}}
            assert await asyncio.to_thread(_request, server, "POST", "/console/rpc", token, call) == 200
            event = {"identity": "_system", "event_type": "memory.dream.started", "timestamp_ms": 1_700_000_000_000,
                     "data": {"realm": "default", "run_id": "traced"}}
            first = (await asyncio.to_thread(post_events, server, event, env["MOBKIT_INGEST_TOKEN"]))["event_ids"][0]
            client = await WsClient.connect(f"{server.ws}/ws/console/events/?auth_token={token}&after={first}")
            await client.events(quiet_s=0.5)
            await client.close()
            wanted = {"rpc mobkit/memory/panel/records", "realm query", "timeline subscribe", "timeline replay"}
            names = await asyncio.to_thread(collector.wait_for, wanted)
        finally:
            await asyncio.to_thread(stop_serve, server)

    assert wanted <= names, names
    spans = collector.spans()
    http_spans = [s for s in spans if s.name.startswith(("GET", "POST")) and s.kind == s.SPAN_KIND_SERVER]
    assert {s.name.split()[0] for s in http_spans} == {"GET", "POST"}
    realm_queries = [s for s in spans if s.name == "realm query"]
    assert any(a.key == "mobkit.realm" and a.value.string_value == "default"
               for s in realm_queries for a in s.attributes)
    # The realm queries of the page are children of its request's span, in the same trace.
    request_ids = {s.span_id for s in http_spans}
    assert any(s.parent_span_id in request_ids for s in realm_queries)
    if redis_up:
        assert any(a.key == "db.system" and a.value.string_value == "redis" for s in spans for a in s.attributes)


SERVE_WITHOUT_TRACING = r"""
import json, sys
from mobkit_console.asgi import application  # the whole app, as a server imports it
from django.test import Client
client = Client(HTTP_AUTHORIZATION="Bearer " + sys.argv[1])
statuses = [client.get(path).status_code for path in ("/console/memory/records/?realm=default", "/console/memory/")]
statuses.append(client.post("/console/rpc", {"jsonrpc": "2.0", "id": 1, "method": "mobkit/memory/panel/records"},
                            content_type="application/json").status_code)
print(json.dumps({"statuses": statuses, "otel": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
"""


def test_without_an_endpoint_no_process_imports_opentelemetry(tmp_path: Path):
    env, token = _console(tmp_path)
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    env["DJANGO_ALLOWED_HOSTS"] = "testserver"  # Django's test client's host
    done = subprocess.run([PYTHON, "-c", SERVE_WITHOUT_TRACING, token], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"statuses": [200, 200, 200], "otel": []}
