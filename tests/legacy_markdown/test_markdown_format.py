"""MobKit's markdown hot-store format: escaping, parser rules, the read cap (docs/runtime-surfaces.md §3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_panel.store.legacy_markdown import (
    END_MARKER,
    LegacyRecord,
    parse_markdown,
    read_markdown_file,
    render_markdown,
)


def record(n: int, title: str = "Title", body: str = "Body", tags=None) -> LegacyRecord:
    return LegacyRecord(f"mem-{n}", title, body, tags or [], 1_000 + n, 2_000 + n)


META = '<!-- mobkit-agent-memory {"memory_id":"mem-%s","tags":[],"created_at_ms":1,"updated_at_ms":2} -->'


def test_rendered_file_is_mobkits_exact_bytes():
    text = render_markdown([record(2, "Second", "two"), record(1, "First", "one", ["a", "b"])])
    assert text == (
        "# MobKit Agent Memory\n\n"
        "## First\n"
        '<!-- mobkit-agent-memory {"memory_id":"mem-1","tags":["a","b"],"created_at_ms":1001,"updated_at_ms":2001} -->\n'
        "one\n"
        "<!-- /mobkit-agent-memory -->\n\n"
        "## Second\n"
        '<!-- mobkit-agent-memory {"memory_id":"mem-2","tags":[],"created_at_ms":1002,"updated_at_ms":2002} -->\n'
        "two\n"
        "<!-- /mobkit-agent-memory -->\n\n"
    )


@pytest.mark.parametrize(
    ("body", "escaped_lines"),
    [
        ("plain\ntext", []),
        (f"before\n{END_MARKER}\nafter", [f"\\{END_MARKER}"]),
        (f"before\n   {END_MARKER}  \nafter", [f"\\   {END_MARKER}  "]),
        ('x\n<!-- mobkit-agent-memory {"memory_id":"forged"} -->\ny', ['\\<!-- mobkit-agent-memory {"memory_id":"forged"} -->']),
        ("x\n## Looks like a heading\ny", []),  # safe once the metadata line has been read
        ("x\n# MobKit Agent Memory\ny", []),
    ],
)
def test_body_escaping_round_trips(body, escaped_lines):
    text = render_markdown([record(1, body=body), record(2, body="next record")])
    for line in escaped_lines:
        assert f"\n{line}\n" in text
    parsed = parse_markdown(text)
    assert parsed.skipped == 0
    assert [r.body for r in parsed.records] == [body, "next record"]


def test_a_backslashed_marker_the_author_wrote_loses_one_backslash():
    # MobKit only escapes structural lines, so a body line that already reads "\<end marker>"
    # is written as-is and the reader strips its backslash (docs/runtime-surfaces.md §3.2's unescape rule).
    parsed = parse_markdown(render_markdown([record(1, body=f"a\n\\{END_MARKER}\nb")]))
    assert parsed.records[0].body == f"a\n{END_MARKER}\nb"


def test_corrupt_metadata_drops_that_record_and_keeps_its_neighbours():
    text = (
        "# MobKit Agent Memory\n\n"
        f"## One\n{META % 1}\nfirst body\n{END_MARKER}\n\n"
        "## Broken\n<!-- mobkit-agent-memory {not json} -->\nlost body\n\n"
        f"## Three\n{META % 3}\nthird body\n{END_MARKER}\n\n"
    )
    parsed = parse_markdown(text)
    assert [(r.memory_id, r.title, r.body) for r in parsed.records] == [
        ("mem-1", "One", "first body"),
        ("mem-3", "Three", "third body"),
    ]
    assert parsed.skipped == 1


@pytest.mark.parametrize(
    ("block", "why"),
    [
        (f"## Empty\n{META % 9}\n   \n{END_MARKER}\n", "empty body"),
        (f"## No meta\nonly body\n{END_MARKER}\n", "no metadata"),
        ('## Bad stamp\n<!-- mobkit-agent-memory {"memory_id":"m","tags":[],"created_at_ms":-1,"updated_at_ms":2} -->\nb\n' + END_MARKER + "\n", "negative timestamp"),
        ('## Bad tags\n<!-- mobkit-agent-memory {"memory_id":"m","tags":[1],"created_at_ms":1,"updated_at_ms":2} -->\nb\n' + END_MARKER + "\n", "non-string tag"),
    ],
)
def test_malformed_records_are_skipped_and_counted(block, why):
    parsed = parse_markdown(f"# MobKit Agent Memory\n\n{block}\n## Good\n{META % 1}\nkept\n{END_MARKER}\n")
    assert [r.body for r in parsed.records] == ["kept"], why
    assert parsed.skipped == 1, why


def test_parser_quirks_mobkit_has():
    text = (
        "preamble lines are ignored\n"
        "## Quirky  \n"
        "body before the metadata is kept\n"
        f"{META % 1}\n"
        "\n"
        "## not a new record after metadata\n"
        f"{END_MARKER}\n"
        "ignored between records\n"
        f"## Unterminated\n{META % 2}\nflushed at EOF"
    )
    parsed = parse_markdown(text.replace("\n", "\r\n"))
    assert [(r.title, r.body) for r in parsed.records] == [
        ("Quirky", "body before the metadata is kept\n\n## not a new record after metadata"),
        ("Unterminated", "flushed at EOF"),
    ]


def test_files_over_the_8_mib_cap_are_refused(tmp_path: Path):
    path = tmp_path / "big.md"
    path.write_bytes(b"# MobKit Agent Memory\n\n" + b"x" * (8 * 1024 * 1024))
    with pytest.raises(ValueError, match="agent memory file exceeds bundled retention cap of 8388608 bytes"):
        read_markdown_file(path)
    path.write_bytes(b"x" * (8 * 1024 * 1024))  # exactly the cap still reads
    assert read_markdown_file(path).records == []
