"""``seed_demo``: both demo realms, every panel has data, and no silent overwrite."""

from __future__ import annotations

import sqlite3

import pytest
from django.core.management import CommandError, call_command

from memory_panel.store.realms import realm_names


def query(path, sql):
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


def test_seed_demo_writes_both_realms_with_every_kind_tier_and_status(agent_memory_dir, capsys):
    call_command("seed_demo", "--records", "200")
    assert realm_names() == ["default", "team:blue"]
    assert (agent_memory_dir / "team%3Ablue.sqlite3").is_file()
    main = agent_memory_dir / "default.sqlite3"
    assert query(main, "SELECT COUNT(*) FROM records") == [(200,)]
    assert {r[0] for r in query(main, "SELECT DISTINCT kind FROM records")} == {
        "preference", "fact", "gotcha", "procedure", "relationship", "open_loop", "reference"}
    assert {r[0] for r in query(main, "SELECT DISTINCT trust FROM records")} == {
        "untrusted", "agent_observed", "agent_verified", "application", "operator"}
    assert {r[0] for r in query(main, "SELECT DISTINCT status_kind FROM records")} == {
        "active", "superseded", "quarantined", "tombstoned"}
    assert {r[0] for r in query(main, "SELECT DISTINCT scope_kind FROM records")} == {
        "identity", "mob", "operator", "realm"}
    # A live claimant: a quarantined supersede whose prior is still active.
    assert query(main, "SELECT COUNT(*) FROM records c JOIN records p ON c.supersedes = p.memory_id"
                       " WHERE c.status_kind='quarantined' AND p.status_kind='active'")[0][0] >= 1
    assert query(main, "SELECT COUNT(*) FROM records WHERE memory_id LIKE '%-released'") == [(1,)]
    assert {r[0] for r in query(main, "SELECT DISTINCT surface FROM injections")} == {"build", "turn"}
    assert query(main, "SELECT COUNT(*) FROM dream_runs") == [(3,)]
    assert query(main, "SELECT COUNT(*) FROM pending_promotions WHERE status='pending'")[0][0] >= 1
    assert query(main, "SELECT COUNT(*) FROM pending_harvests WHERE status='pending'")[0][0] >= 1
    assert {r[0] is None for r in query(main, "SELECT taint FROM proposals")} == {True, False}
    assert "team:blue" in capsys.readouterr().out


def test_seed_demo_refuses_to_overwrite_unless_forced(agent_memory_dir):
    call_command("seed_demo")
    main = agent_memory_dir / "default.sqlite3"
    before = query(main, "SELECT memory_id FROM records ORDER BY memory_id")
    with pytest.raises(CommandError, match="already exists"):
        call_command("seed_demo")
    assert query(main, "SELECT memory_id FROM records ORDER BY memory_id") == before
    call_command("seed_demo", "--force", "--realm", "default")
    assert query(main, "SELECT memory_id FROM records ORDER BY memory_id") != before


def test_seed_demo_creates_the_directory_and_writes_the_named_realm_alone(agent_memory_dir, settings):
    settings.MOBKIT_AGENT_MEMORY_ROOT = agent_memory_dir / "fresh" / "agent-memory"
    call_command("seed_demo", "--realm", "staging")
    assert realm_names() == ["staging"]


def test_demo_realms_fixture_names_story_records(demo_realms):
    assert set(demo_realms.realms) == {"default", "team:blue"}
    assert demo_realms.ids["q_release_successor"].endswith("-released")
