"""Catching a generation up with its realm through the audit feed (docs/realm-index.md §4).

``audit_id`` only grows in a live store, so the audit rows past a generation's high-water mark
name every record written since it was built or last caught up. When that history is not the one
the generation indexed (a file restored or replaced in place, a schema migration) or the backlog
is too large to apply inline, only a rebuild can help.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from memory_panel.store.console_index.generations import REALM, readonly, set_meta
from memory_panel.store.signals import index_caught_up

# Above this many new audit rows a request does not catch up inline; a rebuild does.
MAX_INLINE_DELTA = 5000

ReadDelta = Callable[[sqlite3.Connection, int, set[str]], Any]
# Writes what was gathered; False when it cannot be applied and only a rebuild can help.
ApplyDelta = Callable[[sqlite3.Connection, Any], bool]


def catch_up_from_audit(
    path: Path, conn: sqlite3.Connection, read: ReadDelta, apply: ApplyDelta, *, family: str, realm: str,
    also: Collection[str] = (),
) -> bool:
    """Apply the audit rows past the high-water mark; False when only a rebuild can help.

    ``read(source, high_water, touched ids)`` gathers what the index needs from one snapshot of
    the realm; ``apply(conn, gathered)`` writes it (docs/realm-index.md §4). ``also`` names records
    to re-read though no audit row names them (usage counters, docs/realm-index.md §6). ``family``
    and ``realm`` name the index in the ``index_caught_up`` signal.
    """
    outcome, behind = _catch_up(path, conn, read, apply, also)
    index_caught_up.send_robust(sender=None, family=family, realm=realm, outcome=outcome, behind=behind)
    return outcome != "rebuild"


def _catch_up(
    path: Path, conn: sqlite3.Connection, read: ReadDelta, apply: ApplyDelta, also: Collection[str]
) -> tuple[str, int]:
    """("current" | "applied" | "rebuild", audit rows the realm held past the high-water mark)."""
    high_water, token, realm_schema = _high_water(conn)
    with readonly(path) as source:
        source.execute("BEGIN")  # one snapshot of the realm for the whole catch-up
        try:
            newest = source.execute("SELECT COALESCE(MAX(audit_id), 0) FROM audit").fetchone()[0]
            behind = max(0, newest - high_water)
            if _schema_cookie(source) != realm_schema:
                return "rebuild", behind  # docs/realm-index.md §5: a migration may rewrite keys without audit rows
            if newest < high_water or not _same_audit_row(source, high_water, token):
                return "rebuild", behind  # restored or replaced in place: the history we indexed is gone
            if newest == high_water and not also:
                return "current", 0
            delta = source.execute(
                "SELECT audit_id, stage_token, memory_id FROM audit WHERE audit_id > ?"
                " ORDER BY audit_id LIMIT ?",
                (high_water, MAX_INLINE_DELTA + 1),
            ).fetchall()
            if len(delta) > MAX_INLINE_DELTA:
                return "rebuild", behind
            touched = {memory_id for _, _, memory_id in delta if memory_id} | set(also)
            gathered = read(source, high_water, touched)
            last_id, last_token = (delta[-1][0], delta[-1][1]) if delta else (high_water, token)
        finally:
            source.rollback()
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _high_water(conn)[0] == high_water:  # another thread or process may have got here first
            if not apply(conn, gathered):
                conn.execute("ROLLBACK")
                return "rebuild", behind
            set_meta(conn, audit_high_water=str(last_id), audit_token=last_token)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return "applied", behind


def _high_water(conn: sqlite3.Connection) -> tuple[int, str, str]:
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('audit_high_water', 'audit_token', 'realm_schema')"))
    return int(meta["audit_high_water"]), meta["audit_token"], meta.get("realm_schema", "")


def _schema_cookie(source: sqlite3.Connection, db: str = "main") -> str:
    # SQLite's schema cookie: any table or index created, altered or dropped in the realm moves it.
    return str(source.execute(f"PRAGMA {db}.schema_version").fetchone()[0])


def _same_audit_row(source: sqlite3.Connection, audit_id: int, token: str) -> bool:
    if audit_id == 0:
        return True
    row = source.execute("SELECT stage_token FROM audit WHERE audit_id = ?", (audit_id,)).fetchone()
    return row is not None and row[0] == token


def snapshot_high_water(out: sqlite3.Connection) -> dict[str, str]:
    """The meta a new generation starts from: the newest audit row of the attached realm's snapshot."""
    newest = out.execute(f"SELECT audit_id, stage_token FROM {REALM}.audit ORDER BY audit_id DESC LIMIT 1").fetchone()
    audit_id, token = newest or (0, "")
    return {"audit_high_water": str(audit_id), "audit_token": token, "realm_schema": _schema_cookie(out, REALM)}
