"""A realm's first indexes: copied from the realm file inside SQLite, never writing it (docs/realm-index.md §5)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from memory_panel.simulator.store_writer import identity_scope, mob_scope
from memory_panel.store.console_index.family import start_first_builds
from memory_panel.store.realm_index import REALM_INDEX
from memory_panel.store.search_index import SEARCH_INDEX

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def indexed(settings):
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False


def _fingerprint(root: Path) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.iterdir())
        if path.name.endswith((".sqlite3", ".sqlite3-wal"))
    }


def _meta(generation: Path) -> dict[str, str]:
    with sqlite3.connect(generation) as conn:
        return dict(conn.execute("SELECT key, value FROM meta"))


def test_first_builds_leave_the_realm_file_unchanged_and_build_the_realm_index_first(realm_writer, agent_memory_dir):
    writer = realm_writer("default")
    for n in range(4):
        writer.remember(identity_scope("default", "identity:luka"), f"Fact {n}", f"Body {n}")
        writer.remember(mob_scope("default", "ops"), f"Runbook {n}", f"Step {n}")
    before = _fingerprint(agent_memory_dir)

    start_first_builds("default")

    assert _fingerprint(agent_memory_dir) == before
    pages, search = REALM_INDEX.newest("default"), SEARCH_INDEX.newest("default")
    assert pages is not None and search is not None
    # Deep pages need only the realm index: it is complete before the search build starts.
    assert float(_meta(pages)["built_at"]) <= float(_meta(search)["built_at"])
    with sqlite3.connect(pages) as conn:
        assert conn.execute("SELECT COUNT(*) FROM entries").fetchone() == (8,)
        # Two scopes, each numbered once however many records it holds.
        assert conn.execute("SELECT COUNT(*) FROM scopes").fetchone() == (2,)
        assert conn.execute("SELECT SUM(records) FROM holdings").fetchone() == (8,)


def test_a_realm_file_in_another_text_encoding_is_indexed_too(realm_writer, agent_memory_dir):
    writer = realm_writer("made")
    for n in range(3):
        writer.remember(identity_scope("made", "identity:luka"), f"Fähre {n}", f"Überfahrt {n}")
    writer.close()
    # The same realm, copied row by row into a file whose text is UTF-16.
    source = sqlite3.connect(agent_memory_dir / "made.sqlite3")
    utf16 = sqlite3.connect(agent_memory_dir / "utf16.sqlite3")
    utf16.execute("PRAGMA encoding = 'UTF-16le'")
    tables = source.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name != 'sqlite_sequence'")
    for table, sql in tables.fetchall():
        utf16.execute(sql)
        rows = source.execute(f'SELECT * FROM "{table}"').fetchall()
        if rows:
            utf16.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(rows[0]))})', rows)
    source.close()
    utf16.commit()
    utf16.close()
    before = _fingerprint(agent_memory_dir)

    start_first_builds("utf16")

    assert _fingerprint(agent_memory_dir) == before
    with sqlite3.connect(REALM_INDEX.newest("utf16")) as conn:
        assert conn.execute("SELECT COUNT(*) FROM entries").fetchone() == (3,)
    with sqlite3.connect(SEARCH_INDEX.newest("utf16")) as conn:
        assert conn.execute("SELECT COUNT(*) FROM text WHERE text MATCH 'fahre'").fetchone() == (3,)
