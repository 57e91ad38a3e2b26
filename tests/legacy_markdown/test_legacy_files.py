"""Legacy markdown files under the agent-memory root, listed by import state, and their page."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_panel.selectors.legacy import legacy_markdown_files
from memory_panel.store.legacy_markdown import IMPORT_FAILED, IMPORTED, PENDING, LegacyRecord, render_markdown
from access.caller import Caller, access_for
from tests.support.files import write_md
from tests.support.postures import READER, SCOUT_ONLY

PAGE = "/console/memory/legacy/"
HOSTILE = "<img src=x onerror=alert(1)>"


def rec(memory_id: str, title: str, body: str) -> LegacyRecord:
    return LegacyRecord(memory_id, title, body, ["travel"], 1_700_000_000_000, 1_700_000_000_500)


@pytest.fixture
def legacy_tree(agent_memory_dir: Path) -> Path:
    write_md(agent_memory_dir, "default", "identity:scout", [rec("mem-a", "Scout note", "pending body")])
    write_md(agent_memory_dir, "default", "identity:lead", [rec("mem-b", "Lead note", "done")], ".md.imported")
    write_md(agent_memory_dir, "team.blue", "identity:scout", [rec("mem-c", "Blue", "failed")], ".md.import-failed")
    write_md(agent_memory_dir, "default", "bad identity", [rec("mem-d", "Odd", "stem has a space")])
    (agent_memory_dir / "default" / "notes.txt").write_text("not memory")
    return agent_memory_dir


def test_files_are_listed_with_their_import_state_and_decoded_names(legacy_tree, settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    files = legacy_markdown_files(access=access_for(Caller(subject=READER)))
    assert [(f.realm, f.identity, f.state, f.identity_valid, [r.memory_id for r in f.records]) for f in files] == [
        ("default", "bad identity", PENDING, False, ["mem-d"]),
        ("default", "identity:lead", IMPORTED, True, ["mem-b"]),
        ("default", "identity:scout", PENDING, True, ["mem-a"]),
        ("team.blue", "identity:scout", IMPORT_FAILED, True, ["mem-c"]),
    ]
    assert files[2].file_name == "identity%3Ascout.md"


def test_an_oversized_file_is_reported_not_raised(agent_memory_dir, settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    folder = agent_memory_dir / "default"
    folder.mkdir()
    (folder / "identity%3Abig.md").write_bytes(b"x" * (8 * 1024 * 1024 + 1))
    [big] = legacy_markdown_files(access=access_for(Caller(subject=READER)))
    assert big.error == "agent memory file exceeds bundled retention cap of 8388608 bytes"


def test_files_follow_identity_access(legacy_tree, access_toml):
    access_toml(SCOUT_ONLY)
    files = legacy_markdown_files(access=access_for(Caller(subject=READER)))
    assert {(f.realm, f.identity) for f in files} == {("default", "identity:scout"), ("team.blue", "identity:scout")}


def test_page_marks_states_and_escapes_record_text(console, agent_memory_dir):
    write_md(agent_memory_dir, "default", "identity:scout", [rec("mem-x", f"T {HOSTILE}", f"B {HOSTILE}")])
    (agent_memory_dir / "default" / "identity%3Aold.md.imported").write_text(render_markdown([rec("mem-y", "Old", "old")]))
    broken = render_markdown([rec("mem-z", "Fine", "kept")]) + "## Broken\nno metadata\n<!-- /mobkit-agent-memory -->\n"
    (agent_memory_dir / "default" / "identity%3Amixed.md").write_text(broken)
    response = console.get(PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<img src=x" not in html
    assert "T &lt;img src=x onerror=alert(1)&gt;" in html and "B &lt;img" in html
    assert html.count("not yet imported") == 2 and "chip--good\">imported" in html
    assert "1 malformed record skipped" in html


def test_page_without_markdown_files_says_so(console, agent_memory_dir):
    assert "No legacy markdown files" in console.get(PAGE).content.decode()


def test_htmx_request_gets_the_fragment(console, legacy_tree):
    html = console.get(PAGE, HTTP_HX_REQUEST="true").content.decode()
    assert html.lstrip().startswith('<div id="legacy-files">') and "<html" not in html
