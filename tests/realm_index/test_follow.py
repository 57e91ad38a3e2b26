"""Follow, don't rebuild: an unchanged realm costs no rebuild; usage counters are followed without one."""

from __future__ import annotations

import os

import pytest

from access.caller import Access
from memory_panel.selectors.record_utility import record_list_by_utility
from memory_panel.simulator.store_writer import identity_scope
from memory_panel.store import realm_index as index_module
from memory_panel.store.realm_index import build, realm_index
from memory_panel.store.realms import realm_path
from memory_panel.store.record_filter import RecordFilter

pytestmark = pytest.mark.django_db

OPEN = Access(subject="ops", groups=frozenset(), enforced=False, is_admin=False)


@pytest.fixture(autouse=True)
def indexed(settings, monkeypatch):
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    settings.MOBKIT_REALM_INDEX_USAGE_SECONDS = 0
    monkeypatch.setattr(index_module, "_usage_watch", index_module.ChangeWatch())


@pytest.fixture
def writer(realm_writer):
    w = realm_writer("default")
    luka = identity_scope("default", "identity:luka")
    for title in ("Old", "Middle", "New"):
        w.clock.advance(1000)
        w.remember(luka, title, f"{title} body")
    build("default")
    return w


def _generations() -> list[str]:
    return sorted(p.name for p in (index_module.index_dir() / "default").glob("gen-*.sqlite3"))


def _utility_titles() -> list[str]:
    page = record_list_by_utility(access=OPEN, realm="default", filters=RecordFilter(), limit=10, cursor=None)
    return [record.title for record in page.records]


def _age_the_generation(seconds: float, *, realm_written_since: bool) -> None:
    index = realm_index("default")
    built_at = float(index.conn.execute("SELECT value FROM meta WHERE key = 'built_at'").fetchone()[0])
    index.conn.execute("UPDATE meta SET value = ? WHERE key = 'built_at'", (str(built_at - seconds),))
    if not realm_written_since:
        realm = realm_path("default")
        for path in (realm, realm.with_name(realm.name + "-wal")):
            if path.exists():
                os.utime(path, (built_at - 2 * seconds, built_at - 2 * seconds))


def test_an_unchanged_realm_is_never_rebuilt_however_old_its_index(writer, settings):
    _age_the_generation(10**6, realm_written_since=False)
    settings.MOBKIT_REALM_INDEX_RECONCILE_SECONDS = 60  # opted in: still nothing to reconcile
    for _ in range(3):
        assert realm_index("default") is not None
    assert _generations() == ["gen-1.sqlite3"]


def test_an_opted_in_reconcile_rebuilds_only_a_realm_written_since_the_build(writer, settings):
    writer.clock.advance(1000)
    writer.remember(identity_scope("default", "identity:luka"), "Later", "written after the build")
    assert realm_index("default") is not None
    assert _generations() == ["gen-1.sqlite3"]  # off by default: the catch-up is enough
    _age_the_generation(10**6, realm_written_since=True)
    settings.MOBKIT_REALM_INDEX_RECONCILE_SECONDS = 60
    realm_index("default")
    assert _generations() == ["gen-2.sqlite3"]


def test_a_usage_counter_the_runtime_moves_reaches_the_utility_order_and_the_tiles_without_a_rebuild(writer):
    assert _utility_titles() == ["New", "Middle", "Old"]  # never injected: the records order
    old = writer.conn.execute("SELECT memory_id FROM records WHERE title = 'Old'").fetchone()[0]
    for _ in range(3):  # injected three times, never judged useful: DEAD (no audit row written)
        writer.record_injection(old, "identity:luka", session_key="s")
    index = realm_index("default")
    assert _utility_titles() == ["Old", "New", "Middle"]
    assert [fact[0] for fact in index.tile_facts()] == ["recall.dead"]
    assert _generations() == ["gen-1.sqlite3"]


def test_the_usage_counters_are_scanned_only_when_the_realm_file_changed(writer, monkeypatch):
    scans: list[str] = []
    scan = index_module._usage_moved
    monkeypatch.setattr(index_module, "_usage_moved", lambda path, conn: scans.append(path.name) or scan(path, conn))
    for _ in range(3):
        realm_index("default")
    assert len(scans) == 1  # the first look of this process
    old = writer.conn.execute("SELECT memory_id FROM records WHERE title = 'Old'").fetchone()[0]
    writer.mark_usage(old, "judged_useful")
    realm_index("default")
    realm_index("default")
    assert len(scans) == 2
