"""What a pushed event may not do: leak a verdict's rationale, break the page, or hide _system."""

from __future__ import annotations

import asyncio

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.support.postures import STAR_AND_ONE_AGENT_VIEWERS
from tests.support.sockets import envelope, ingest, open_socket, receive_events, token_for

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_verdict_reaches_view_only_readers_without_reviewer_or_rationale(ingest_token):
    status, _ = await ingest(
        envelope(
            "_system", "memory.quarantine.verdict",
            record_id="mem-1", verdict="tombstone", rationale="body said: the secret plan", reviewer="ops@x",
        )
    )
    assert status == 201
    socket = await open_socket("/ws/console/events/", token=await token_for("admin@example.test"), query="after=console-evt-0")
    [frame] = await receive_events(socket)
    assert frame["event"]["data"] == {"realm": "default", "record_id": "mem-1", "verdict": "tombstone", "rationale": None}
    await socket.disconnect()


async def test_system_events_follow_agents_star_but_not_other_agents(ingest_token, access_toml):
    access_toml(STAR_AND_ONE_AGENT_VIEWERS)
    star = await open_socket("/ws/console/events/", token=await token_for("star@example.test"))
    router = await open_socket("/ws/console/events/", token=await token_for("router@example.test"))
    await ingest(envelope("_system", "memory.dream.started", run_id="dream-1"))
    assert [f["event"]["data"]["run_id"] for f in await receive_events(star)] == ["dream-1"]
    assert await receive_events(router) == []
    await star.disconnect()
    await router.disconnect()


def test_a_timestamp_past_year_9999_does_not_break_the_page(ingest_token):
    status, _ = asyncio.run(ingest(envelope("_system", "memory.dream.started", run_id="far-future") | {"timestamp_ms": 10**15}))
    assert status == 201
    client = Client()
    client.force_login(get_user_model().objects.create_user("ops", "ops@example.test", "pw"))
    page = client.get("/console/timeline/")
    assert page.status_code == 200
    assert "far-future" in page.content.decode()
