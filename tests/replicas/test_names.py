"""Replica realm names beside local ones, and follow_replicas refusing what it cannot follow,
without Litestream running (docs/replicas.md §1-§3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memory_panel.replicas import Supervisor, litestream_binary
from memory_panel.store.realms import realm_names, realm_path
from tests.support.worlds import write_notes


def test_a_local_realm_named_like_a_replica_realm_is_not_served_while_its_label_is_configured(
    agent_memory_dir: Path, settings
):
    write_notes(agent_memory_dir, "east/x", 1)
    write_notes(agent_memory_dir, "plain", 1)
    assert realm_names() == ["east/x", "plain"]
    settings.MOBKIT_REPLICA_SOURCES = {"east": "file:///nowhere"}
    assert realm_names() == ["plain"]
    assert realm_path("east/x") == settings.MOBKIT_PERSISTENT_STATE / "console" / "replicas" / "east" / "x.sqlite3"


def test_follow_replicas_without_sources_says_what_to_set(settings):
    settings.MOBKIT_REPLICA_SOURCES = {}
    with pytest.raises(CommandError, match="MOBKIT_REPLICA_SOURCES is empty"):
        call_command("follow_replicas")


def test_a_source_it_cannot_list_is_reported_and_the_others_followed(tmp_path: Path):
    supervisor = Supervisor(
        sources={"cloud": "s3://bucket/mobkit", "gone": f"file://{tmp_path / 'missing'}"},
        copies_root=tmp_path / "copies", binary=litestream_binary(), interval_ms=1000,
    )
    supervisor.step()
    status = json.loads((tmp_path / "copies" / "followers.json").read_text())
    assert status["sources"]["cloud"]["error"].startswith("only file:// sources can be listed for realms yet")
    assert status["sources"]["gone"]["error"] == f"file://{tmp_path / 'missing'}: no such directory"
    assert status["copies"] == {}

