"""memory_panel/cursor.py: MobKit's cursor text and the keyset predicate (docs/store-format.md §5.1).

A cursor is ``"<updated_at_ms>:<memory_id>"`` (a u64, split at the first ':'); the predicate keeps
exactly the rows after it in the records order, which is checked against a brute-force ordering
of what a real store-writer realm holds.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory_panel.cursor import SQLITE_INT_MAX, U64_LIMIT, Cursor, keyset_predicate, parse_cursor
from memory_panel.errors import InvalidParams
from memory_panel.simulator.store_writer import realm_file
from tests.support.worlds import write_notes
from tests.support.written import Written, newest_first

U64_MAX = U64_LIMIT - 1


@pytest.mark.parametrize(
    "cursor",
    [
        Cursor(0, "a"),
        Cursor(1_700_000_000_010, "mem-1796154265786087239-57ee-1-471e"),
        Cursor(5, "id:with:colons"),  # the id is everything after the first ':'
        Cursor(SQLITE_INT_MAX, "x"),
        Cursor(SQLITE_INT_MAX + 1, "x"),
        Cursor(U64_MAX, "x"),
        Cursor(7, "ünïcode id"),
    ],
)
def test_a_cursor_round_trips_through_its_text(cursor):
    assert parse_cursor(cursor.encode()) == cursor
    assert cursor.encode() == f"{cursor.updated_at_ms}:{cursor.memory_id}"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, None),
        ("", None),
        ("  \t", None),
        (" 5:mem-a ", Cursor(5, "mem-a")),
        ("007:mem-a", Cursor(7, "mem-a")),
        (f"{U64_MAX}:x", Cursor(U64_MAX, "x")),
    ],
)
def test_an_absent_or_blank_cursor_is_none_and_text_is_trimmed(raw, expected):
    assert parse_cursor(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        5, 5.0, True, [], {}, ["5:a"],  # not a string
        "5", "5:", ":mem-a", "mem-a",  # a part missing
        "-5:a", "+5:a", "5a:x", "0x5:a", "5.0:a", "5 :a", "1e3:a",  # not a u64
        "٣:a", "５:a",  # digits, but not ASCII ones
        f"{U64_LIMIT}:x",  # one past u64
        f"{10**30}:x",
    ],
)
def test_a_malformed_cursor_is_invalid_params(raw):
    with pytest.raises(InvalidParams) as raised:
        parse_cursor(raw)
    assert raised.value.message == "Invalid params: malformed cursor"


def test_cursors_order_as_their_keyset_key():
    assert Cursor(5, "b") > Cursor(5, "a") > Cursor(4, "z")
    assert Cursor(5, "b").key() == (5, "b")


@pytest.mark.parametrize(
    ("cursor", "placeholder", "sql", "args"),
    [
        (Cursor(5, "a"), "?", "(updated_at_ms, memory_id) < (?, ?)", [5, "a"]),
        (Cursor(5, "a"), "%s", "(updated_at_ms, memory_id) < (%s, %s)", [5, "a"]),
        (Cursor(SQLITE_INT_MAX, "a"), "?", "(updated_at_ms, memory_id) < (?, ?)", [SQLITE_INT_MAX, "a"]),
        # SQLite cannot bind a u64 past its signed 64 bits, and every stored row is below it
        (Cursor(SQLITE_INT_MAX + 1, "a"), "?", "1", []),
        (Cursor(U64_MAX, "a"), "?", "1", []),
    ],
)
def test_the_keyset_predicate_text_and_arguments(cursor, placeholder, sql, args):
    assert keyset_predicate(cursor, placeholder=placeholder) == (sql, args)


@pytest.fixture(scope="module")
def tied_realm(tmp_path_factory) -> tuple[Path, list[Written]]:
    """61 records whose updated_at_ms tie in runs of three, as a store-writer realm file."""
    root = tmp_path_factory.mktemp("cursor") / "agent-memory"
    rows = write_notes(root, "walk", 61, tie_every=3)
    return realm_file("walk", root), rows


def rows_after(path: Path, cursor: Cursor) -> list[str]:
    sql, args = keyset_predicate(cursor)
    uri = f"file:{path}?mode=ro"
    with sqlite3.connect(uri, uri=True) as conn:
        found = conn.execute(
            f"SELECT memory_id FROM records WHERE {sql} ORDER BY updated_at_ms DESC, memory_id DESC", args
        )
        return [memory_id for (memory_id,) in found]


def test_the_predicate_keeps_exactly_the_rows_after_each_row_of_a_real_realm(tied_realm):
    path, rows = tied_realm
    ordered = newest_first(rows)
    assert len({row.updated_at_ms for row in rows}) < len(rows)  # ties really exist
    for position, row in enumerate(ordered):
        cursor = parse_cursor(row.cursor)
        assert rows_after(path, cursor) == [r.id for r in ordered[position + 1 :]], position


@pytest.mark.parametrize(
    "cursor",
    [
        Cursor(0, ""),  # older than every row: no row follows it
        Cursor(SQLITE_INT_MAX, ""),  # newer than every row: every row follows it
        Cursor(SQLITE_INT_MAX + 1, ""),  # the u64 edge: newer still, though SQLite cannot bind it
        Cursor(U64_MAX, "zzz"),
    ],
)
def test_the_predicate_agrees_with_a_brute_force_ordering_at_the_edges(tied_realm, cursor):
    path, rows = tied_realm
    want = [r.id for r in newest_first(rows) if (r.updated_at_ms, r.id) < cursor.key()]
    assert rows_after(path, cursor) == want


def test_a_cursor_between_tied_rows_resumes_after_it_by_id(tied_realm):
    path, rows = tied_realm
    ordered = newest_first(rows)
    tied = next(i for i in range(len(ordered) - 1) if ordered[i].updated_at_ms == ordered[i + 1].updated_at_ms)
    first, second = ordered[tied], ordered[tied + 1]
    # an id sorting between the two tied rows' ids: the next page starts at the second one
    between = Cursor(first.updated_at_ms, second.id + "~")
    assert first.id > between.memory_id > second.id
    assert rows_after(path, between)[0] == second.id
