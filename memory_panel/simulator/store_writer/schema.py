"""Realm files: where they live, MobKit's DDL for both store formats, and how they are opened.

docs/store-format.md §1: the same tables, indexes, pragmas and ledger row a fresh MobKit file has.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory_panel.simulator.store_writer.errors import StoreWriteError
from memory_panel.store.realms import REALM_SUFFIX, agent_memory_root, encode_path_segment

SCHEMA_DOMAIN = "mobkit-memory"
SCHEMA_VERSION = 3
FORMATS = ("current", "older")

RECORD_COLUMNS = (
    "memory_id", "scope_kind", "scope_key", "kind", "title", "description", "body", "tags", "provenance",
    "trust", "status_kind", "status_detail", "supersedes", "derived_from", "working_set_rank",
    "rank_set_at_ms", "content_hash", "created_at_ms", "updated_at_ms", "usage_stats", "tombstoned_at_ms",
)


def realm_file(realm: str, root: Path | None = None) -> Path:
    return (root if root is not None else agent_memory_root()) / f"{encode_path_segment(realm)}{REALM_SUFFIX}"


def _records_ddl(with_ever_quarantined: bool) -> str:
    tail = ",\n  ever_quarantined INTEGER NOT NULL DEFAULT 0" if with_ever_quarantined else ""
    return (
        "CREATE TABLE IF NOT EXISTS records (\n"
        "  memory_id TEXT PRIMARY KEY, scope_kind TEXT NOT NULL, scope_key TEXT NOT NULL,"
        " kind TEXT NOT NULL,\n"
        "  title TEXT NOT NULL, description TEXT NOT NULL DEFAULT '', body TEXT NOT NULL,\n"
        "  tags TEXT NOT NULL DEFAULT '[]', provenance TEXT NOT NULL, trust TEXT NOT NULL,\n"
        "  status_kind TEXT NOT NULL, status_detail TEXT, supersedes TEXT,\n"
        "  derived_from TEXT NOT NULL DEFAULT '[]', working_set_rank INTEGER, rank_set_at_ms INTEGER,\n"
        "  content_hash TEXT NOT NULL, created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL,\n"
        f"  usage_stats TEXT NOT NULL DEFAULT '{{}}', tombstoned_at_ms INTEGER{tail})"
    )


_SHARED_DDL = (
    "CREATE INDEX IF NOT EXISTS records_scope_idx ON records(scope_kind, scope_key, status_kind)",
    "CREATE INDEX IF NOT EXISTS records_scope_hash_idx ON records(scope_kind, scope_key, content_hash)",
    "CREATE TABLE IF NOT EXISTS proposals (proposal_id TEXT PRIMARY KEY, scope_kind TEXT NOT NULL,"
    " scope_key TEXT NOT NULL, record TEXT NOT NULL, author TEXT NOT NULL,"
    " status TEXT NOT NULL DEFAULT 'pending', created_at_ms INTEGER NOT NULL, taint TEXT)",
    "CREATE TABLE IF NOT EXISTS audit (audit_id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " stage_token TEXT NOT NULL, op_index INTEGER NOT NULL, op_kind TEXT NOT NULL, memory_id TEXT,"
    " detail TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS stage (token TEXT PRIMARY KEY, batch TEXT NOT NULL,"
    " created_at_ms INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS injections (injection_id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " record_id TEXT NOT NULL, identity TEXT NOT NULL, session_key TEXT, surface TEXT NOT NULL,"
    " at_ms INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS injections_record_idx ON injections(record_id, at_ms)",
    "CREATE TABLE IF NOT EXISTS pending_harvests (identity TEXT NOT NULL, session_key TEXT,"
    " cause TEXT NOT NULL, retired_at_ms INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'pending',"
    " PRIMARY KEY (identity, retired_at_ms))",
    "CREATE TABLE IF NOT EXISTS pending_promotions (pending_id TEXT PRIMARY KEY,"
    " stage_token TEXT NOT NULL, record_id TEXT NOT NULL, scope_kind TEXT NOT NULL,"
    " scope_key TEXT NOT NULL, rationale TEXT, status TEXT NOT NULL DEFAULT 'pending',"
    " created_at_ms INTEGER NOT NULL, resolved_at_ms INTEGER)",
)

_CURRENT_ONLY_DDL = (
    "CREATE TABLE IF NOT EXISTS dream_runs (run_id TEXT PRIMARY KEY,"
    " partition_label TEXT NOT NULL DEFAULT 'realm', started_at_ms INTEGER NOT NULL,"
    " completed_at_ms INTEGER NOT NULL, ops_committed INTEGER NOT NULL, detail TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS dream_runs_completed ON dream_runs(completed_at_ms DESC)",
    "CREATE TABLE IF NOT EXISTS dream_audit_verdicts (run_id TEXT NOT NULL, record_id TEXT NOT NULL,"
    " verdict TEXT NOT NULL, rationale TEXT NOT NULL, created_at_ms INTEGER NOT NULL,"
    " resolved_at_ms INTEGER, resolution TEXT, PRIMARY KEY (run_id, record_id))",
    "CREATE INDEX IF NOT EXISTS dream_audit_verdicts_open ON dream_audit_verdicts(record_id, resolved_at_ms)",
    "CREATE TABLE IF NOT EXISTS meerkat_schema (domain TEXT PRIMARY KEY, version INTEGER NOT NULL)",
)


def connect(path: Path, fmt: str) -> sqlite3.Connection:
    # §1.2: busy_timeout 60 s (current) / 5 s (older); WAL read back; synchronous=FULL (current only).
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                           timeout=60.0 if fmt == "current" else 5.0)
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if mode not in ("wal", "memory"):
        conn.close()
        raise StoreWriteError(f"journal_mode=WAL was refused (got '{mode}')")
    if fmt == "current":
        conn.execute("PRAGMA synchronous=FULL")
    return conn


def create_schema(conn: sqlite3.Connection, fmt: str) -> None:
    """A fresh file's tables in one transaction; the current format stamps its ledger row."""
    conn.execute("BEGIN")
    conn.execute(_records_ddl(with_ever_quarantined=fmt == "current"))
    for ddl in _SHARED_DDL + (_CURRENT_ONLY_DDL if fmt == "current" else ()):
        conn.execute(ddl)
    if fmt == "current":
        conn.execute("INSERT INTO meerkat_schema(domain, version) VALUES (?, ?)",
                     (SCHEMA_DOMAIN, SCHEMA_VERSION))
    conn.execute("COMMIT")


def file_format(path: Path) -> str:
    """'current' when the file has the schema ledger, else 'older' (docs/store-format.md §0)."""
    probe = sqlite3.connect(path)
    try:
        tables = {r[0] for r in probe.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        probe.close()
    return "current" if "meerkat_schema" in tables else "older"
