"""Hand-edited realm files (the store invites it) are shown flagged, never as a 500."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from memory_panel.simulator.store_writer import create_op, identity_scope, new_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("ops", "ops@example.test", "pw"))
    return client


def _rpc(client: Client, method: str, params: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = client.post("/console/rpc", json.dumps(body), content_type="application/json")
    assert reply.status_code == 200 and reply["Content-Type"] == "application/json"
    return reply.json()


def test_text_in_an_integer_column_is_flagged_not_fatal(realm_writer, client):
    writer = realm_writer("default")
    memory_id = writer.remember(identity_scope("default", "identity:luka"), "Prefers tea", "Green, no sugar.")
    writer.conn.execute("UPDATE records SET updated_at_ms = 'soon', working_set_rank = 'top' WHERE memory_id = ?", (memory_id,))

    row = _rpc(client, "mobkit/memory/panel/records", {})["result"]["records"][0]
    assert row["id"] == memory_id and row["updated_at_ms"] == 0
    assert row["malformed_columns"] == ["working_set_rank", "updated_at_ms"]
    assert _rpc(client, "mobkit/memory/panel/record", {"memory_id": memory_id})["result"]["record"]["body"] == "Green, no sugar."
    assert client.get("/console/memory/records/").status_code == 200
    assert client.get(f"/console/memory/records/{memory_id}/").status_code == 200


def test_a_record_id_with_a_slash_has_a_working_biography(realm_writer, client):
    writer = realm_writer("default")
    source = writer.remember(identity_scope("default", "identity:luka"), "Source", "body", id="notes/2026")
    child = writer.remember(identity_scope("default", "identity:luka"), "Child", "body", derived_from=[source])
    page = client.get(f"/console/memory/records/{child}/")
    assert page.status_code == 200
    assert 'href="/console/memory/records/notes/2026/' in page.content.decode()
    assert client.get("/console/memory/records/notes/2026/").status_code == 200


def test_a_hand_edited_dream_sheet_still_renders(realm_writer, client):
    writer = realm_writer("default")
    run_id = writer.new_dream_run_id()
    scope = identity_scope("default", "identity:luka")
    writer.steward_batch(run_id, [create_op(scope, new_record(kind="fact", title="Consolidated", body="b"))])
    writer.record_dream_run(run_id, started_at_ms=writer.clock(), ops_committed=0, phases=[], verdicts={}, skips=[])
    writer.conn.execute("UPDATE dream_runs SET detail = '{\"phases\": 5, \"verdicts\": [], \"skips\": 7}'")
    page = client.get("/console/memory/dreams/")
    assert page.status_code == 200 and run_id in page.content.decode()
    runs = _rpc(client, "mobkit/memory/panel/dream_runs", {})["result"]["runs"]
    assert runs[0]["detail"] == {"phases": 5, "verdicts": [], "skips": 7}
