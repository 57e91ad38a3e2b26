"""One JSON-RPC request runs calls for at most MOBKIT_RPC_REQUEST_BUDGET_MS."""

from __future__ import annotations

import json
import time

import pytest

from memory_panel.simulator.demo import seed_demo
from tests.support.postures import USER
from tests.support.rpc import PANEL, post_raw

pytestmark = pytest.mark.django_db


def exhausted(request_id, budget_ms: int) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {
        "code": -32603,
        "message": f"request budget exhausted: the batch spent its {budget_ms} ms before this call; send it again",
        "data": {"kind": "request_budget_exhausted", "budget_ms": budget_ms},
    }}


def recall(request_id: int) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": PANEL + "recall_preview",
            "params": {"identity": "identity:luka", "query_text": "travel plans and preferences"}}


@pytest.fixture(scope="module")
def large_realm(tmp_path_factory):
    root = tmp_path_factory.mktemp("budget") / "agent-memory"
    seed_demo(root=root, records=3000)
    return root


@pytest.fixture
def reader(large_realm, settings, signed_in):
    settings.MOBKIT_PERSISTENT_STATE = large_realm.parent
    settings.MOBKIT_AGENT_MEMORY_ROOT = large_realm
    settings.MOBKIT_ACCESS_CONFIG = None
    return signed_in(USER)


def test_a_batch_of_100_recall_previews_stops_running_calls_once_the_budget_is_spent(client, reader, settings):
    settings.MOBKIT_RPC_REQUEST_BUDGET_MS = 300
    started = time.monotonic()
    reply = post_raw(client, json.dumps([recall(i) for i in range(100)]))
    elapsed = time.monotonic() - started

    assert reply.status == 200
    assert [r["id"] for r in reply.body] == list(range(100))
    ran = [r for r in reply.body if "result" in r]
    refused = reply.body[len(ran):]
    assert ran and refused, "the budget should let some calls run and refuse the rest"
    assert refused == [exhausted(r["id"], 300) for r in refused]
    assert all(r["result"]["identity"] == "identity:luka" for r in ran)
    # Refused calls cost nothing: the request ends about one call after the budget.
    per_call = elapsed / len(ran)
    assert elapsed < 0.3 + 3 * per_call + 0.5


def test_the_first_call_always_runs_and_refused_notifications_get_no_reply(client, reader, settings):
    settings.MOBKIT_RPC_REQUEST_BUDGET_MS = 0
    batch = [
        {"jsonrpc": "2.0", "id": "a", "method": "mobkit/capabilities"},
        {"jsonrpc": "2.0", "method": "mobkit/capabilities"},
        {"jsonrpc": "2.0", "id": "b", "method": "mobkit/capabilities"},
        {"jsonrpc": "2.0", "id": "c", "method": 7},  # still judged as a request: Invalid Request
    ]
    reply = post_raw(client, json.dumps(batch))
    assert [r["id"] for r in reply.body] == ["a", "b", "c"]
    assert "methods" in reply.body[0]["result"]
    assert reply.body[1] == exhausted("b", 0)
    assert reply.body[2]["error"]["code"] == -32600


def test_within_the_budget_every_call_runs(client, reader, settings):
    settings.MOBKIT_RPC_REQUEST_BUDGET_MS = 60_000
    reply = post_raw(client, json.dumps([recall(i) for i in range(5)]))
    assert all("result" in r for r in reply.body)
