"""Two daphne processes sharing Redis and one console database: an event ingested once reaches a
socket on each exactly once (docs/wire-contract.md: REDIS_URL, several server processes share one timeline)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from tests.support.redis_server import SHARED_REDIS_URL, shared_redis_unreachable
from tests.support.servers import WsClient, daphne_servers, deployment_env, manage, post_events

pytestmark = pytest.mark.redis


async def test_event_ingested_once_reaches_a_socket_on_each_process_exactly_once(tmp_path: Path):
    reason = shared_redis_unreachable()
    if reason:
        pytest.skip(reason)
    env = deployment_env(tmp_path / "state", REDIS_URL=SHARED_REDIS_URL)
    (tmp_path / "state" / "console").mkdir(parents=True)
    manage(env, "migrate", "--noinput")
    token = manage(env, "mobkit_token", "admin@example.test").strip().splitlines()[-1]

    with daphne_servers(env, 2) as (first, second):
        sockets = [await WsClient.connect(f"{server.ws}/ws/console/events/?auth_token={token}")
                   for server in (first, second)]
        marker = f"dream-{uuid.uuid4().hex}"
        event = {"identity": "_system", "event_type": "memory.dream.started", "timestamp_ms": 1_700_000_000_000,
                 "data": {"realm": "default", "run_id": marker}}

        stored = await asyncio.to_thread(post_events, first, event, env["MOBKIT_INGEST_TOKEN"])

        for client in sockets:
            received = [e for e in await client.events(quiet_s=1.5) if e["data"].get("run_id") == marker]
            assert [e["event_id"] for e in received] == stored["event_ids"]
            await client.close()
