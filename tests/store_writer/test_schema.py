"""The file a new realm gets, in both formats (docs/store-format.md §1.2–§1.3)."""

from __future__ import annotations

import sqlite3

import pytest

from memory_panel.store.realms import CURRENT_TABLES, OLDER_TABLES
from memory_panel.simulator.store_writer import APPLICATION, StoreWriter, batch, identity_scope, tombstone_op


def _tables(path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")} - {"sqlite_sequence"}


def _columns(path, table) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def test_current_format_has_ten_tables_indexes_ledger_and_wal(realm_writer):
    writer = realm_writer("default")
    assert _tables(writer.path) == set(CURRENT_TABLES)
    with sqlite3.connect(writer.path) as conn:
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL")}
        assert conn.execute("SELECT domain, version FROM meerkat_schema").fetchall() == [("mobkit-memory", 3)]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert indexes == {"records_scope_idx", "records_scope_hash_idx", "injections_record_idx",
                       "dream_runs_completed", "dream_audit_verdicts_open"}
    assert writer.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert _columns(writer.path, "records")[-1] == "ever_quarantined"


def test_older_format_has_exactly_seven_tables_and_no_ever_quarantined(realm_writer):
    writer = realm_writer("legacy", format="older")
    memory_id = writer.remember(identity_scope("legacy", "identity:luka"), "Old fact", "Written by an old runtime.")
    writer.supersede(memory_id, "Old fact v2", "Still written by an old runtime.")
    token = writer.stage(batch(realm="legacy", author=APPLICATION, ops=[tombstone_op(memory_id)]))
    # Older-format batches carry no "kind" (docs/store-format.md §2, stage.batch).
    stored = writer.conn.execute("SELECT batch FROM stage WHERE token=?", (token,)).fetchone()[0]
    assert '"kind"' not in stored
    writer.commit(token)
    assert _tables(writer.path) == set(OLDER_TABLES)
    assert "ever_quarantined" not in _columns(writer.path, "records")


def test_existing_realm_file_is_not_overwritten_without_overwrite(realm_writer, agent_memory_dir):
    writer = realm_writer("default")
    writer.remember(identity_scope("default", "identity:ana"), "Keeps", "This row must survive.")
    with pytest.raises(FileExistsError):
        StoreWriter.create("default", root=agent_memory_dir)
    assert writer.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 1


def test_open_reads_the_format_of_an_existing_file(realm_writer, agent_memory_dir):
    realm_writer("legacy", format="older").close()
    with StoreWriter.open("legacy", root=agent_memory_dir) as reopened:
        assert reopened.format == "older"
