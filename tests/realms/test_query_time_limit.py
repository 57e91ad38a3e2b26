"""A realm query past the time limit is interrupted and answered with a clear error, not a 500."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError, connections
from django.test import Client

from memory_panel.store.realms import realm_alias
from memory_panel.simulator.store_writer import APPLICATION, create_op, identity_scope, new_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def busy_realm(realm_writer):
    writer = realm_writer("default")
    scope = identity_scope("default", "identity:luka")
    ops = (create_op(scope, new_record(kind="fact", title=f"Fact {n}", body=f"Body {n}")) for n in range(3000))
    writer.bulk_apply(ops, author=APPLICATION)
    return writer


def test_a_runaway_query_is_interrupted(busy_realm, settings):
    settings.MOBKIT_REALM_QUERY_TIMEOUT_MS = 50
    endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n"
    with connections[realm_alias("default")].cursor() as cursor:
        with pytest.raises(OperationalError, match="interrupted"):
            cursor.execute(endless)
        assert cursor.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 3000  # next query runs


def test_the_rpc_reports_the_time_limit_clearly(busy_realm, settings):
    # A zero limit interrupts any statement that runs more than a few thousand steps: the sort of
    # 3,000 unindexed rows is well past that, so the records page hits the limit every time.
    settings.MOBKIT_REALM_QUERY_TIMEOUT_MS = 0
    client = Client()
    client.force_login(get_user_model().objects.create_user("ops", "ops@example.test", "pw"))
    body = {"jsonrpc": "2.0", "id": 9, "method": "mobkit/memory/panel/records", "params": {"realm": "default"}}
    reply = client.post("/console/rpc", json.dumps(body), content_type="application/json")
    assert reply.status_code == 200
    assert reply.json() == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {
            "code": -32603,
            "message": "agent memory panel failed: the realm query ran past the 0 ms time limit",
            "data": None,
        },
    }


def test_the_records_page_reports_the_time_limit_instead_of_failing(busy_realm, settings):
    settings.MOBKIT_REALM_QUERY_TIMEOUT_MS = 0
    client = Client()
    client.force_login(get_user_model().objects.create_user("ops", "ops@example.test", "pw"))
    response = client.get("/console/memory/records/", {"realm": "default"})
    assert response.status_code == 503
    assert b"ran past the 0 ms time limit" in response.content
