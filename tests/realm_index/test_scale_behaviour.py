"""The index's safety valves, untimed: when it cannot be trusted, pages read the realm directly.

A restore written into the same file (same inode, another audit history) and a backlog larger than
a request may apply inline both leave the index unusable; until a new generation is built, every
page must come from the realm file itself, and the new generation must agree with it.
"""

from __future__ import annotations

import sqlite3

import pytest
from django.db import close_old_connections

from memory_panel.store import realm_index as index_module
from memory_panel.store.console_index import catch_up
from memory_panel.selectors import records as selectors
from memory_panel.store.realm_index import build, realm_index
from memory_panel.store.realms import forget_realm_connections
from memory_panel.selectors.records import record_list
from memory_panel.store.record_filter import RecordFilter
from memory_panel.simulator.store_writer import identity_scope, mob_scope
from access.caller import Access, Caller, access_for
from tests.support.postures import LUKA_ONLY_READER

pytestmark = pytest.mark.django_db

OPEN = Access(subject="ops", groups=frozenset(), enforced=False, is_admin=False)


@pytest.fixture(autouse=True)
def indexed(settings):
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False


def _titles(realm: str = "default") -> list[str]:
    page = record_list(access=OPEN, realm=realm, filters=RecordFilter(), limit=200, cursor=None)
    return [record.title for record in page.records]


def _generations() -> list[str]:
    return sorted(p.name for p in (index_module.index_dir() / "default").glob("gen-*.sqlite3"))


def test_a_restore_into_the_same_file_falls_back_and_rebuilds(realm_writer):
    original = realm_writer("default")
    for n in range(3):
        original.remember(identity_scope("default", "identity:luka"), f"Before restore {n}", "old")
        realm_writer.clock.advance(5)
    build("default")
    assert _titles() == ["Before restore 2", "Before restore 1", "Before restore 0"]
    path = original.path
    inode = path.stat().st_ino

    # The backup holds a different history, longer than the one indexed, so audit ids run past
    # the index's high-water mark: only the audit row at the mark tells the two apart.
    backup = realm_writer("backup")
    for n in range(6):
        backup.remember(mob_scope("backup", "ops"), f"From backup {n}", "restored")
        realm_writer.clock.advance(5)
    original.close()
    with sqlite3.connect(path) as target:
        backup.conn.backup(target)  # SQLite's online restore rewrites the pages in place
    forget_realm_connections()
    assert path.stat().st_ino == inode

    assert realm_index("default") is None  # this request reads the file; a rebuild was started
    assert _generations() == ["gen-2.sqlite3"]
    forget_realm_connections()
    expected = [f"From backup {n}" for n in reversed(range(6))]
    assert _titles() == expected
    assert realm_index("default") is not None  # the new generation describes the restored file
    assert _titles() == expected


def test_a_backlog_past_the_inline_limit_reads_directly_until_rebuilt(realm_writer, monkeypatch):
    monkeypatch.setattr(catch_up, "MAX_INLINE_DELTA", 3)
    requested: list[str] = []
    monkeypatch.setattr(index_module, "start_build", requested.append)  # hold the rebuild back
    writer = realm_writer("default")
    luka = identity_scope("default", "identity:luka")
    writer.remember(luka, "Indexed", "first")
    build("default")

    realm_writer.clock.advance(5)
    writer.remember(luka, "Caught up inline", "one audit row")
    assert realm_index("default") is not None  # a small backlog is applied by the request itself
    assert requested == []
    assert _titles() == ["Caught up inline", "Indexed"]

    for n in range(5):
        realm_writer.clock.advance(5)
        writer.remember(luka, f"Backlog {n}", "more audit rows than a request applies")
    expected = [f"Backlog {n}" for n in reversed(range(5))] + ["Caught up inline", "Indexed"]
    for _ in range(2):  # every request until the rebuild lands reads the file, and asks again
        assert realm_index("default") is None
        assert _titles() == expected
    assert requested and set(requested) == {"default"}

    build("default")
    assert realm_index("default") is not None
    assert _titles() == expected


def test_a_reader_granted_one_agent_pages_through_the_index_as_through_the_file(
    realm_writer, settings, access_toml, monkeypatch
):
    access_toml(LUKA_ONLY_READER)
    reader = access_for(Caller(subject="reader@example.com"))
    writer = realm_writer("default")
    scopes = [identity_scope("default", f"identity:{name}") for name in ("luka", "ana", "router", "mira")]
    scopes.append(mob_scope("default", "ops"))
    for n in range(400):  # one luka row in five, so an index chunk holds few readable entries
        realm_writer.clock.advance(n % 3)  # some ties in updated_at_ms
        writer.remember(scopes[n % 5], f"Note {n}", f"body {n}")

    def walk(limit: int) -> list[tuple[int, str]]:
        seen, cursor = [], None
        while True:
            page = record_list(access=reader, realm="default", filters=RecordFilter(), limit=limit, cursor=cursor)
            assert all(record.scope_key == "identity:luka" for record in page.records)
            seen += [(record.updated_at_ms, record.id) for record in page.records]
            if page.next_cursor is None:
                return seen
            cursor = page.next_cursor

    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 10**9
    direct = {limit: walk(limit) for limit in (1, 7, 50)}
    assert len(direct[50]) == 80
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    monkeypatch.setattr(selectors, "INDEX_BATCH_MAX", 8)  # chunks that double, then stop growing
    build("default")
    assert realm_index("default") is not None
    for limit, expected in direct.items():
        assert walk(limit) == expected, limit


def test_many_requests_on_one_thread_keep_reading_the_realm(realm_writer):
    """Each request reconnects (CONN_MAX_AGE 0); the time limit must not nest once per request."""
    writer = realm_writer("default")
    writer.remember(identity_scope("default", "identity:luka"), "Still readable", "body")
    for _ in range(1200):  # more than Python's recursion limit of nested wrappers
        assert _titles() == ["Still readable"]
        close_old_connections()
