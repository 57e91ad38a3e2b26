"""Where the metrics come from, counted in one process (docs/serving.md §8): the JSON-RPC dispatcher,
the realm-query deadline, the index builds and catch-ups, the audit queue, and the quarantine
backlog the metrics process reads at scrape time."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError, connections
from django.test import Client
from prometheus_client import REGISTRY

from memory_panel.selectors.quarantine import QuarantineBacklog, quarantine_backlog
from memory_panel.simulator.store_writer import agent, identity_scope
from memory_panel.store.realm_index import REALM_INDEX, build
from memory_panel.store.realms import realm_alias, realm_path
from mobkit_console.audit.services import audit_flush, audit_record
from tests.support.written import TAINT

pytestmark = pytest.mark.django_db


def _value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _rpc(client: Client, body: object) -> None:
    client.post("/console/rpc", json.dumps(body), content_type="application/json")


@pytest.mark.parametrize(("body", "counted"), [
    ({"jsonrpc": "2.0", "id": 1, "method": "mobkit/capabilities"}, [("mobkit/capabilities", "ok")]),
    ({"jsonrpc": "2.0", "id": 1, "method": "mobkit/no-such-method-of-a-caller"}, [("other", "-32601")]),
    ({"jsonrpc": "2.0", "method": "mobkit/notified-unknown"}, [("other", "-32601")]),  # a notification counts too
    ({"jsonrpc": "2.0", "id": 1, "method": "mobkit/memory/panel/records", "params": ["not", "an", "object"]},
     [("mobkit/memory/panel/records", "-32602")]),
    ({"id": 1, "method": "mobkit/capabilities"}, [("mobkit/capabilities", "-32600")]),
    ({"jsonrpc": "2.0", "id": 1, "method": 7}, [("other", "-32600")]),
    ([{"jsonrpc": "2.0", "id": 1, "method": "mobkit/capabilities"}, {"jsonrpc": "2.0", "id": 2, "method": "x/y"}],
     [("mobkit/capabilities", "ok"), ("other", "-32601")]),
])
def test_rpc_calls_are_counted_by_registered_method_and_code(agent_memory_dir, body, counted):
    client = Client()
    client.force_login(get_user_model().objects.create_user("ops", "ops@example.test", "pw"))
    before = {key: _value("mobkit_rpc_calls_total", method=key[0], code=key[1]) for key in counted}
    _rpc(client, body)
    for method, code in counted:
        assert _value("mobkit_rpc_calls_total", method=method, code=code) == before[(method, code)] + 1
    assert _value("mobkit_rpc_calls_total", method="mobkit/no-such-method-of-a-caller", code="-32601") == 0


def test_an_interrupted_realm_query_is_counted_by_its_realm(realm_writer, settings):
    realm_writer("slowpoke").remember(identity_scope("slowpoke", "identity:luka"), "Fact", "Body")
    settings.MOBKIT_REALM_QUERY_TIMEOUT_MS = 20
    before = _value("mobkit_realm_queries_interrupted_total", realm="slowpoke")
    endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n"
    with connections[realm_alias("slowpoke")].cursor() as cursor:
        with pytest.raises(OperationalError, match="interrupted"):
            cursor.execute(endless)
    assert _value("mobkit_realm_queries_interrupted_total", realm="slowpoke") == before + 1


def test_an_index_build_and_catch_up_are_counted_with_the_lag_they_found(realm_writer, settings):
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    writer = realm_writer("tracked")
    luka = identity_scope("tracked", "identity:luka")
    writer.remember(luka, "First", "First body")
    labels = {"family": "realm-index", "realm": "tracked"}
    built = _value("mobkit_index_builds_total", outcome="ok", **labels)
    assert build("tracked") is not None
    assert _value("mobkit_index_builds_total", outcome="ok", **labels) == built + 1

    for n in range(3):
        writer.clock.advance(1000)
        writer.remember(luka, f"Later {n}", f"Later body {n}")
    applied = _value("mobkit_index_catch_ups_total", outcome="applied", **labels)
    path = realm_path("tracked")
    assert REALM_INDEX.caught_up("tracked", path, path.stat()) is not None
    assert _value("mobkit_index_catch_ups_total", outcome="applied", **labels) == applied + 1
    assert _value("mobkit_index_lag_audit_rows", **labels) == 3


def test_audit_entries_are_counted_queued_then_written():
    queued, written = _value("mobkit_audit_entries_queued_total"), _value("mobkit_audit_entries_written_total")
    audit_record(action="export", realm="default")
    assert _value("mobkit_audit_entries_queued_total") == queued + 1
    audit_flush()
    assert _value("mobkit_audit_entries_written_total") == written + 1


def test_the_quarantine_backlog_counts_the_waiting_records_and_the_oldest_ones_time(realm_writer, settings):
    writer = realm_writer("gated")
    scout = identity_scope("gated", "identity:scout")
    writer.remember(scout, "Fine", "Nothing to see")
    assert quarantine_backlog("gated") == QuarantineBacklog(records=0, oldest_created_at_ms=None)
    writer.clock.advance(1000)
    first_at = writer.clock.now_ms
    writer.remember(scout, "Wire the funds", "Tainted one", author=agent("identity:scout"), gate_reason=TAINT)
    writer.clock.advance(1000)
    writer.remember(scout, "Wire again", "Tainted two", author=agent("identity:scout"), gate_reason=TAINT)
    assert quarantine_backlog("gated") == QuarantineBacklog(records=2, oldest_created_at_ms=first_at)

    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0  # the same answer from the realm's index
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    build("gated")
    writer.clock.advance(1000)
    writer.remember(scout, "One more fine", "Still nothing")  # a new signature: worked out afresh
    assert quarantine_backlog("gated") == QuarantineBacklog(records=2, oldest_created_at_ms=first_at)
