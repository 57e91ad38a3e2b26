"""Realm discovery reads the directory on every call: realms come and go without a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from memory_panel.store.realms import decode_path_segment, encode_path_segment, realm_names, store_format
from memory_panel.simulator.store_writer import StoreWriter, identity_scope

pytestmark = pytest.mark.django_db


def _realms_over_rpc(client: Client) -> list[str]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "mobkit/memory/panel/records", "params": {}}
    return client.post("/console/rpc", json.dumps(body), content_type="application/json").json()["result"]["realms"]


@pytest.fixture
def client() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("ops", "ops@example.test", "pw"))
    return client


def test_a_missing_agent_memory_directory_is_no_realms_not_an_error(settings, tmp_path, client):
    settings.MOBKIT_AGENT_MEMORY_ROOT = tmp_path / "nowhere"
    assert realm_names() == []
    assert _realms_over_rpc(client) == []
    assert not (tmp_path / "nowhere").exists()  # looking never creates it


def test_realms_appear_and_disappear_while_serving(agent_memory_dir: Path, client):
    assert _realms_over_rpc(client) == []
    for name in ("zeta", "team:blue", "alpha"):
        with StoreWriter.create(name, root=agent_memory_dir) as writer:
            writer.remember(identity_scope(name, "identity:luka"), f"In {name}", "body")
    assert _realms_over_rpc(client) == ["alpha", "team:blue", "zeta"]
    (agent_memory_dir / "zeta.sqlite3").unlink()
    assert _realms_over_rpc(client) == ["alpha", "team:blue"]


def test_files_that_are_not_realms_are_ignored(agent_memory_dir: Path):
    (agent_memory_dir / "notes.txt").write_text("not a realm")
    (agent_memory_dir / "default.sqlite3-wal").write_bytes(b"")
    (agent_memory_dir / "legacy").mkdir()
    assert realm_names() == []


@pytest.mark.parametrize(
    ("realm", "file_stem"),
    [("team:blue", "team%3Ablue"), ("..", "%2E%2E"), ("", "_"), ("café", "caf%C3%A9"), ("a_b-c9", "a_b-c9")],
)
def test_realm_names_round_trip_through_file_names(realm, file_stem):
    assert encode_path_segment(realm) == file_stem
    if realm:
        assert decode_path_segment(file_stem) == realm


def test_an_older_format_file_is_recognised(agent_memory_dir: Path):
    with StoreWriter.create("old", root=agent_memory_dir, format="older"):
        pass
    fmt = store_format("old")
    assert not fmt.has("dream_runs") and not fmt.has_ever_quarantined
    assert fmt.label == "older (7 tables)"
