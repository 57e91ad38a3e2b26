"""A Redis outage loses no live event (docs/timeline-live.md §4): two server processes
on a Redis of the test's own, a socket and an SSE stream on each (one process's opened during the
outage), Redis stopped for a few seconds while events are pushed to both processes and a realm file
is written; every event the log holds reaches every stream that stayed open, exactly once."""

from __future__ import annotations

import asyncio
import sqlite3
import time
import urllib.error
from pathlib import Path
from typing import Any

import pytest

from memory_panel.simulator.store_writer import StoreWriter, agent, batch, create_op, identity_scope, new_record

from tests.support.redis_server import own_redis, redis_server_missing
from tests.support.servers import (
    Server, SseClient, WsClient, console_db, daphne_servers, deployment_env, manage, post_events, wait_following,
)

pytestmark = pytest.mark.redis

REALM = "default"
LUKA = "identity:luka"


def _push(server: Server, run_id: str, token: str) -> dict[str, Any]:
    """What a runtime does: push, and on a server error push the same event (same event_id) again."""
    event = {"event_id": f"runtime-{run_id}", "identity": "_system", "event_type": "memory.dream.started",
             "timestamp_ms": 1_700_000_000_000, "data": {"realm": REALM, "run_id": run_id}}
    for attempt in range(5):
        try:
            return post_events(server, event, token)
        except urllib.error.HTTPError as error:
            if error.code < 500 or attempt == 4:
                raise
            time.sleep(0.2)
    raise AssertionError("unreachable")


def _realm_write(writer: StoreWriter) -> None:
    record = new_record(kind="fact", title="Flight moved to 9am", body="Flight moved to 9am")
    writer.apply_batch(batch(realm=REALM, author=agent(LUKA), ops=[create_op(identity_scope(REALM, LUKA), record)]))


def _stored_event_ids(env: dict[str, str]) -> list[str]:
    with sqlite3.connect(console_db(env)) as conn:
        return [f"console-evt-{seq}" for (seq,) in conn.execute("SELECT seq FROM timeline_timelineevent ORDER BY seq")]


async def test_events_stored_while_redis_is_down_reach_every_open_socket_and_stream_once(tmp_path: Path):
    missing = redis_server_missing()
    if missing:
        pytest.skip(missing)
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    writer = StoreWriter.create(REALM, root=state / "agent-memory")
    with own_redis(tmp_path) as broker:
        env = deployment_env(state, REDIS_URL=broker.url)
        manage(env, "migrate", "--noinput")
        token = manage(env, "mobkit_token", "admin@example.test").strip().splitlines()[-1]
        ingest_token = env["MOBKIT_INGEST_TOKEN"]

        with daphne_servers(env, 2) as servers:
            await asyncio.to_thread(wait_following, env, REALM)
            # The first process's streams open before the outage; the second's while Redis is down,
            # resuming after the last event they saw, so that process's fan-out starts without a layer.
            clients = [await WsClient.connect(f"{servers[0].ws}/ws/console/events/?auth_token={token}"),
                       await SseClient.connect(servers[0], token)]
            before = (await asyncio.to_thread(_push, servers[0], "before", ingest_token))["event_ids"][0]

            await asyncio.to_thread(broker.stop)
            clients += [await WsClient.connect(f"{servers[1].ws}/ws/console/events/?auth_token={token}&after={before}"),
                        await SseClient.connect(servers[1], token, query=f"after={before}")]
            for n in range(6):
                await asyncio.to_thread(_push, servers[n % 2], f"outage-{n}", ingest_token)
            await asyncio.to_thread(_realm_write, writer)  # the follower stores it while Redis is down
            await asyncio.sleep(3)
            await asyncio.to_thread(broker.start)

            for n in range(4):
                await asyncio.to_thread(_push, servers[n % 2], f"after-{n}", ingest_token)

            received = [[event["event_id"] for event in await client.events(quiet_s=4)] for client in clients]
            stored = _stored_event_ids(env)
            assert len(stored) == 12 and stored[0] == before  # 11 pushes and the realm write's one event
            for ids, expected in zip(received, [stored, stored, stored[1:], stored[1:]]):
                assert sorted(ids, key=lambda event_id: int(event_id.rsplit("-", 1)[1])) == expected
            for client in clients:
                await client.close()
    writer.close()
