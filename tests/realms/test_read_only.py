"""The console never changes a realm file: proven by hashing it around every surface it serves."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError, connections
from django.test import Client

from memory_panel.store.realms import realm_alias, realm_names
from access.caller import Caller, access_for
from mobkit_console.rpc.registry import method_names_for

pytestmark = pytest.mark.django_db

PAGES = (
    "/console/",
    "/console/experience",
    "/console/memory/",
    "/console/memory/records/",
    "/console/memory/records/?status=quarantined",
    "/console/memory/quarantine/",
    "/console/memory/dreams/",
    "/console/memory/ledger/",
    "/console/memory/recall/?identity=identity%3Aluka&query_text=travel+seats",
    "/console/memory/legacy/",
    "/console/timeline/",
)


def _fingerprint(root: Path) -> dict[str, str]:
    """sha256 of every realm database file and of its WAL, if one is left."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.iterdir())
        if path.name.endswith((".sqlite3", ".sqlite3-wal"))
    }


@pytest.fixture
def operator_client() -> Client:
    user = get_user_model().objects.create_user("operator", "operator@example.test", "pw")
    client = Client()
    client.force_login(user)
    return client


def _rpc(client: Client, method: str, params: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = client.post("/console/rpc", json.dumps(body), content_type="application/json")
    assert reply.status_code == 200, (method, reply.content[:200])
    return reply.json()


def test_realm_files_are_byte_identical_after_every_page_and_method(demo_realms, agent_memory_dir, operator_client):
    before = _fingerprint(agent_memory_dir)
    assert {name for name in before if name.endswith(".sqlite3")} == {"default.sqlite3", "team%3Ablue.sqlite3"}

    for page in PAGES:
        assert operator_client.get(page).status_code == 200, page
    methods = method_names_for(access_for(Caller(subject="operator@example.test")))
    assert "mobkit/memory/panel/records" in methods
    for realm in realm_names():
        for method in methods:
            if method.endswith("/record"):
                continue  # every record, below
            params = {"realm": realm}
            if method.endswith("/recall_preview"):
                params.update(identity="identity:luka", query_text="travel")
            _rpc(operator_client, method, params)
        walked = []
        cursor = None
        while True:
            page = _rpc(operator_client, "mobkit/memory/panel/records", {"realm": realm, "limit": 25, "cursor": cursor})
            walked += [row["id"] for row in page["result"]["records"]]
            cursor = page["result"]["next_cursor"]
            if cursor is None:
                break
        assert walked and len(walked) == len(set(walked))
        for memory_id in walked:
            assert "result" in _rpc(operator_client, "mobkit/memory/panel/record", {"memory_id": memory_id, "realm": realm})
            assert operator_client.get(f"/console/memory/records/{memory_id}/", {"realm": realm}).status_code == 200

    after = _fingerprint(agent_memory_dir)
    # SQLite readers of a WAL database may leave an empty -wal beside it when the runtime has none
    # open (every SQLite reader does); the database bytes themselves must not change at all.
    empty = hashlib.sha256(b"").hexdigest()
    new_sidecars = {name: digest for name, digest in after.items() if name not in before}
    assert all(name.endswith("-wal") and digest == empty for name, digest in new_sidecars.items())
    assert {name: after[name] for name in before} == before


def test_a_write_through_the_console_connection_is_refused(demo_realms):
    with connections[realm_alias("default")].cursor() as cursor:
        with pytest.raises(OperationalError, match="readonly|read-only|query_only"):
            cursor.execute("DELETE FROM records")
        assert cursor.execute("SELECT COUNT(*) FROM records").fetchone()[0] > 0
