"""``seed_demo``: a named realm alone, the demo marker, and a ledger and legacy file the pages show.

``console`` (tests/conftest.py) is a signed-in reader; access control is off, so it reads everything.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from django.core.management import call_command

from memory_panel.selectors.ledger import ledger_state
from memory_panel.simulator.demo.marker import is_demo_realm
from memory_panel.store.legacy_markdown import read_markdown_file
from memory_panel.store.realms import realm_names

# seed_demo puts the realms' history on the timeline, in the console's database (docs/demo.md §5).
pytestmark = pytest.mark.django_db


def test_seed_demo_with_realm_writes_that_realm_and_its_legacy_file_only(agent_memory_dir):
    call_command("seed_demo", "--realm", "staging")
    assert realm_names() == ["staging"]
    # The timeline read the new realm (read-only): SQLite's own -wal/-shm companions may stand beside it.
    written = sorted(p.name for p in agent_memory_dir.iterdir() if not p.name.endswith(("-wal", "-shm")))
    assert written == ["staging", "staging.sqlite3"]
    assert [p.name for p in (agent_memory_dir / "staging").iterdir()] == ["identity%3Aluka.md"]


def test_seed_demo_with_realm_leaves_an_existing_second_realm_alone(agent_memory_dir):
    call_command("seed_demo")
    blue = (agent_memory_dir / "team%3Ablue.sqlite3").read_bytes()
    call_command("seed_demo", "--realm", "staging")
    assert realm_names() == ["default", "staging", "team:blue"]
    assert (agent_memory_dir / "team%3Ablue.sqlite3").read_bytes() == blue


def test_demo_realms_carry_the_marker_beside_mobkits_own_ledger_row(agent_memory_dir, realm_writer):
    call_command("seed_demo")
    with sqlite3.connect(agent_memory_dir / "default.sqlite3") as conn:
        rows = conn.execute("SELECT domain, version FROM meerkat_schema ORDER BY domain").fetchall()
    assert rows == [("mobkit-console-demo", 1), ("mobkit-memory", 3)]
    assert is_demo_realm(agent_memory_dir / "default.sqlite3")
    assert is_demo_realm(agent_memory_dir / "team%3Ablue.sqlite3")
    realm_writer("plain").close()
    realm_writer("old", format="older").close()
    assert not is_demo_realm(agent_memory_dir / "plain.sqlite3")
    assert not is_demo_realm(agent_memory_dir / "old.sqlite3")
    assert not is_demo_realm(agent_memory_dir / "missing.sqlite3")


def test_seed_demo_writes_a_ledger_state_file_in_mobkits_format(agent_memory_dir):
    call_command("seed_demo")
    path = agent_memory_dir.parent / "memory-ledger-state.json"
    text = path.read_text()
    document = json.loads(text)
    assert text == json.dumps(document, indent=2, ensure_ascii=False)  # serde pretty, 2-space indent
    assert not path.with_suffix(".tmp").exists()
    state = ledger_state()
    assert len(state.assertions) == len(document["assertions"]) >= 10
    assert [a["assertion_id"] for a in state.assertions][:2] == ["memory-assert-000000", "memory-assert-000001"]
    assert [(c["entity"], c["topic"]) for c in state.conflicts] == [
        ("lisbon-office", "address"), ("zurich-per-diem", "contractors")]


def test_seed_demo_never_replaces_an_existing_ledger_file(agent_memory_dir):
    path = agent_memory_dir.parent / "memory-ledger-state.json"
    path.write_text('{"assertions": [], "conflicts": []}')
    call_command("seed_demo", "--force")
    assert path.read_text() == '{"assertions": [], "conflicts": []}'


def test_seed_demo_writes_a_legacy_markdown_file_mobkit_would_import(agent_memory_dir):
    call_command("seed_demo")
    parsed = read_markdown_file(agent_memory_dir / "default" / "identity%3Aluka.md")
    assert parsed.skipped == 0
    assert [r.title for r in parsed.records] == [
        "Keeps receipts in the blue travel wallet", "Prefers morning flights out of Berlin", "Allergic to penicillin"]
    assert all(r.memory_id.startswith("mem-") for r in parsed.records)


def test_ledger_and_legacy_pages_show_what_seed_demo_wrote(agent_memory_dir, console):
    call_command("seed_demo")
    ledger = console.get("/console/memory/ledger/").content.decode()
    assert "The Lisbon office is at Avenida da Liberdade 110." in ledger
    assert "a forum post claims the cap no longer applies" in ledger
    legacy = console.get("/console/memory/legacy/").content.decode()
    assert "Prefers morning flights out of Berlin" in legacy
    assert "identity:luka" in legacy
