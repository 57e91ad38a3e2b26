"""``bin/serve``'s metrics: one scrape sums every worker, a dead worker's streams leave the sums,
and no label ever carries record text, a record id or a subject (docs/serving.md §8)."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from memory_panel.simulator.store_writer import agent, identity_scope
from tests.support.metrics import sample_sum, scrape, scrape_text, wait_metrics
from tests.support.redis_server import SHARED_REDIS_URL, shared_redis_missing
from tests.support.servers import REPO, Serve, WsClient, console_with_token, free_port, start_serve, stop_serve
from tests.support.worlds import write_spread
from tests.support.written import TAINT, new_scribe


def _get(server: Serve, path: str, token: str) -> tuple[int, int | None]:
    """A GET on a new connection: its status and the worker that answered it."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        owner = server.owner_of(connection.sock.getsockname()[1])
        response.read()
        return response.status, owner
    finally:
        connection.close()


def _rpc(server: Serve, token: str, method: str, params: dict) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        connection.request("POST", "/console/rpc", body=body, headers={"Authorization": f"Bearer {token}"})
        return json.loads(connection.getresponse().read())
    finally:
        connection.close()


async def _owner(server: Serve, client: WsClient) -> int | None:
    for _ in range(50):
        owner = server.owner_of(client.connection.local_address[1])
        if owner is not None:
            return owner
        await asyncio.sleep(0.05)
    return None


def _streams(samples) -> float:
    return sample_sum(samples, "mobkit_timeline_open_streams", kind="websocket")


@pytest.mark.redis
async def test_a_scrape_sums_both_workers_and_drops_a_killed_workers_open_streams(tmp_path: Path):
    reason = shared_redis_missing()
    if reason:
        pytest.skip(reason)
    state = tmp_path / "state"
    write_spread(state / "agent-memory", "default", records=50, identities=5)
    metrics_port = free_port()
    env, token = console_with_token(state, "operator@example.test", REDIS_URL=SHARED_REDIS_URL,
                                    METRICS_PORT=str(metrics_port))
    server = await asyncio.to_thread(start_serve, env, 2)
    sockets: list[WsClient] = []
    try:
        workers = server.worker_pids()
        assert len(workers) == 2
        sent, answered_by = 0, set()
        while answered_by != workers and sent < 80:
            status, owner = await asyncio.to_thread(_get, server, "/console/memory/records/?realm=default", token)
            assert status == 200
            sent += 1
            answered_by.add(owner)
        assert answered_by == workers

        samples = await asyncio.to_thread(scrape, metrics_port)
        assert sample_sum(samples, "mobkit_http_requests_total", route="memory-records", status="200") == sent
        assert sample_sum(samples, "mobkit_http_request_duration_seconds_count", route="memory-records") == sent

        held: dict[int, int] = {}
        while set(held) != workers and len(sockets) < 40:
            client = await WsClient.connect(f"{server.ws}/ws/console/events/?auth_token={token}")
            sockets.append(client)
            owner = await _owner(server, client)
            held[owner] = held.get(owner, 0) + 1
        assert set(held) == workers
        samples = await asyncio.to_thread(wait_metrics, metrics_port, lambda s: _streams(s) == len(sockets))
        assert _streams(samples) == len(sockets)

        victim = min(workers)
        os.kill(victim, signal.SIGKILL)
        left = len(sockets) - held[victim]
        samples = await asyncio.to_thread(wait_metrics, metrics_port, lambda s: _streams(s) == left)
        assert _streams(samples) == left
        # The dead worker's requests stay counted: a counter never goes back.
        assert sample_sum(samples, "mobkit_http_requests_total", route="memory-records", status="200") == sent

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (len(server.worker_pids()) != 2 or victim in server.worker_pids()):
            await asyncio.sleep(0.2)
        assert len(server.worker_pids()) == 2 and victim not in server.worker_pids()  # uvicorn replaced it
    finally:
        for client in sockets:
            await client.close()
        await asyncio.to_thread(stop_serve, server)


def test_no_metric_names_record_text_a_record_id_or_a_subject(tmp_path: Path):
    state = tmp_path / "state"
    scribe = new_scribe(state / "agent-memory", "default")
    heron = identity_scope("default", "identity:heron-wq71")
    shown = scribe.remember(heron, "Larkspur ledger zq81", "Obsidian lantern body xv42", tags=["umber-tag-k9"])
    held = scribe.remember(heron, "Wire the funds", "Cobalt quarantined body jm55", author=agent("identity:heron-wq71"),
                           gate_reason=TAINT)
    subject = "kestrel-subject-4471@example.test"
    metrics_port = free_port()
    env, token = console_with_token(state, subject, METRICS_PORT=str(metrics_port))
    server = start_serve(env, 1)
    try:
        for path in ("/console/memory/?realm=default", "/console/memory/records/?realm=default",
                     f"/console/memory/records/{shown.id}/?realm=default", f"/console/memory/records/{held.id}/",
                     "/console/memory/quarantine/", "/console/memory/records/?q=Obsidian+lantern",
                     "/console/memory/records.ndjson?realm=default", f"/console/nothing/{shown.id}"):
            status, _ = _get(server, path, token)
            assert status in (200, 404), path
        assert "result" in _rpc(server, token, "mobkit/memory/panel/records", {"realm": "default"})
        assert _rpc(server, token, "mobkit/Obsidian-method-xv42", {})["error"]["code"] == -32601

        text = scrape_text(metrics_port)
    finally:
        stop_serve(server)
    assert 'mobkit_quarantined_records{realm="default"} 1.0' in text
    assert 'mobkit_rpc_calls_total{code="-32601",method="other"} 1.0' in text
    for secret in ("Larkspur", "Obsidian", "Cobalt", "umber-tag", "heron", "kestrel", shown.id, held.id, "xv42"):
        assert secret not in text


@pytest.mark.parametrize(("name", "value", "said"), [
    ("METRICS_PORT", "nine", "METRICS_PORT must be a port number (0 turns metrics off), not 'nine'"),
    ("METRICS_PORT", "70000", "METRICS_PORT must be a port number"),
    ("LOG_FORMAT", "xml", "LOG_FORMAT must be json or console, not 'xml'"),
])
def test_a_bad_metrics_port_or_log_format_is_refused_with_the_reason(name: str, value: str, said: str):
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "WORKERS")}
    result = subprocess.run([str(REPO / "bin" / "serve")], cwd=REPO, env={**env, name: value, "PORT": "1"},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert said in result.stderr
