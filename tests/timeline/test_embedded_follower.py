"""Live by default (docs/timeline-live.md §1): a server process started with default settings follows the realm
files itself, so a store write reaches its sockets and its event stream with no Redis and no
``watch_realms``; several processes on Redis keep exactly one follower between them."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
from pathlib import Path

import pytest
import redis

from memory_panel.simulator.store_writer import StoreWriter, agent, batch, create_op, identity_scope, new_record

from tests.support.servers import SseClient, WsClient, console_db, daphne_servers, deployment_env, manage, wait_following

REDIS_URL = os.environ.get("MOBKIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
REALM = "default"
LUKA = "identity:luka"
TAINT = "session tainted by web tool 'web_search'"


def _deployment(tmp_path: Path, **extra: str) -> tuple[dict[str, str], str, StoreWriter]:
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    writer = StoreWriter.create(REALM, root=state / "agent-memory")
    env = deployment_env(state, **extra)
    manage(env, "migrate", "--noinput")
    token = manage(env, "mobkit_token", "admin@example.test").strip().splitlines()[-1]
    return env, token, writer


def _quarantined_write(writer: StoreWriter) -> str:
    record = new_record(kind="fact", title="Flight moved to 9am", body="Flight moved to 9am (from a web page)")
    op = create_op(identity_scope(REALM, LUKA), record)
    return writer.apply_batch(batch(realm=REALM, author=agent(LUKA), ops=[op]), gate_reason=TAINT).memory_ids[0]


async def _quarantined_events(client, *, quiet_s: float) -> list[dict]:
    return [e for e in await client.events(quiet_s=quiet_s) if e["event_type"] == "memory.write.quarantined"]


async def test_one_server_with_default_settings_delivers_a_store_write_within_two_seconds(tmp_path: Path):
    env, token, writer = _deployment(tmp_path)
    assert "REDIS_URL" not in env and "MOBKIT_TIMELINE_FOLLOW_REALMS" not in env

    with daphne_servers(env, 1) as (server,):
        await asyncio.to_thread(wait_following, env, REALM)
        socket = await WsClient.connect(f"{server.ws}/ws/console/events/?auth_token={token}")
        stream = await SseClient.connect(server, token)

        written = await asyncio.to_thread(_quarantined_write, writer)
        # Each client's first event, waited for 2 s at most from the commit.
        frame, sse_event = await asyncio.wait_for(asyncio.gather(socket.connection.recv(), stream.next_event()), 2)

        event = json.loads(frame)["event"]
        assert event["event_type"] == "memory.write.quarantined"
        assert event["data"] == {"realm": REALM, "author": 'Agent { identity: "identity:luka" }',
                                 "reason": TAINT, "record_id": written, "scope_kind": "identity", "scope_key": LUKA}
        assert sse_event == event
        await socket.close()
        await stream.close()
    writer.close()


def test_follower_off_setting_leaves_realms_to_watch_realms(tmp_path: Path):
    env, token, writer = _deployment(tmp_path, MOBKIT_TIMELINE_FOLLOW_REALMS="0")
    with daphne_servers(env, 1):
        time.sleep(1.5)  # several polls' worth
        with sqlite3.connect(console_db(env)) as conn:
            assert conn.execute("SELECT COUNT(*) FROM timeline_realmwatermark").fetchone()[0] == 0
            assert conn.execute("SELECT COUNT(*) FROM timeline_watcherlease WHERE holder != ''").fetchone()[0] == 0
    writer.close()


@pytest.mark.redis
async def test_two_processes_on_redis_deliver_a_store_write_once_on_each_with_one_follower(tmp_path: Path):
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError as error:
        pytest.skip(f"Redis at MOBKIT_TEST_REDIS_URL={REDIS_URL} is unreachable ({error})")
    env, token, writer = _deployment(tmp_path, REDIS_URL=REDIS_URL)

    with daphne_servers(env, 2) as servers:
        holder = await asyncio.to_thread(wait_following, env, REALM)
        pids = {str(server.process.pid) for server in servers}
        assert holder.split(":")[1] in pids
        sockets = [await WsClient.connect(f"{server.ws}/ws/console/events/?auth_token={token}") for server in servers]
        streams = [await SseClient.connect(server, token) for server in servers]

        written = await asyncio.to_thread(_quarantined_write, writer)

        received = [await _quarantined_events(client, quiet_s=2) for client in sockets + streams]
        assert all(len(events) == 1 for events in received), received
        assert len({events[0]["event_id"] for events in received}) == 1
        with sqlite3.connect(console_db(env)) as conn:
            assert conn.execute("SELECT COUNT(*) FROM timeline_timelineevent"
                                " WHERE event_type = 'memory.write.quarantined'").fetchone()[0] == 1
            assert [row[0] for row in conn.execute("SELECT holder FROM timeline_watcherlease")] == [holder]
        for client in sockets + streams:
            await client.close()
    writer.close()


def test_a_server_that_stops_cleanly_hands_the_lease_back_at_once(tmp_path: Path):
    env, token, writer = _deployment(tmp_path)
    with daphne_servers(env, 1):
        holder = wait_following(env, REALM)
        assert holder
    # A standby process may take over now rather than after the lease's 15 s.
    with sqlite3.connect(console_db(env)) as conn:
        assert conn.execute("SELECT holder, expires_at_ms FROM timeline_watcherlease").fetchall() == [("", 0)]
    writer.close()
