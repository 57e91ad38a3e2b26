"""A console-owned index of each realm's ordering keys, so pages cost the same at any depth.

MobKit sorts records pages by ``updated_at_ms, memory_id`` and its store has no index for that
order (docs/store-format.md §1.3), so every page is a scan of the whole table. The realm file is the
runtime's and may not be given an index, so the console keeps its own, in its own storage:

- one SQLite file per realm and *generation* under ``<persistent_state>/console/realm-index/``,
  holding each record's ordering and filter keys (never its text: rows are always read from the
  realm file, so content is never stale), the per-scope holdings counts, and the steward's audit
  rows by record;
- kept current from the realm's change feed: ``audit_id`` only grows, so every request first
  applies the audit rows past the index's high-water mark (re-reading the records they name)
  before it answers — a record the runtime writes is listed by the very next request;
- rebuilt from scratch, in a background thread, when there is no index yet, when the realm file
  was replaced or restored (another inode, or the audit row at the high-water mark is gone or
  different), when the delta is too large to apply inline, and periodically to reconcile against
  the table. A new generation replaces the old only once complete; while no valid generation
  exists the selectors fall back to the direct query, so a rebuild never serves wrong rows.

Small realms skip all of this: below ``MOBKIT_REALM_INDEX_MIN_ROWS`` the direct query is cheap.
"""

from __future__ import annotations

import heapq
import logging
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path

from memory_panel import conf

from memory_panel.cursor import ORDER_MS, Cursor, keyset_predicate
from memory_panel.store.console_index import IndexFamily, readonly, realm_rows, set_meta, snapshot_high_water
from memory_panel.store.realms import realm_exists, realm_path
from memory_panel.store.request_memo import once_per_request
from memory_panel.store.tile_facts import fact_rows
from memory_panel.store.utility import utility_rows

logger = logging.getLogger("memory_panel.store.realm_index")

BUILD_BATCH = 20_000
# Bumped whenever the index's tables change: a generation of another version is rebuilt.
SCHEMA_VERSION = "3"

_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE entries (memory_id TEXT PRIMARY KEY, updated_at_ms INTEGER NOT NULL,"
    " created_at_ms INTEGER NOT NULL, scope_kind TEXT NOT NULL, scope_key TEXT NOT NULL,"
    " status_kind TEXT NOT NULL, supersedes TEXT, body_chars INTEGER NOT NULL, kind TEXT NOT NULL,"
    " trust TEXT NOT NULL)",
    "CREATE TABLE holdings (scope_kind TEXT NOT NULL, scope_key TEXT NOT NULL,"
    " status_kind TEXT NOT NULL, records INTEGER NOT NULL, body_chars INTEGER NOT NULL,"
    " PRIMARY KEY (scope_kind, scope_key, status_kind))",
    "CREATE TABLE steward_audit (audit_id INTEGER PRIMARY KEY, memory_id TEXT NOT NULL)",
    # The Holdings verdict tiles' per-record facts (memory_panel/store/tile_facts.py).
    "CREATE TABLE tile_facts (fact TEXT NOT NULL, memory_id TEXT NOT NULL, scope_kind TEXT NOT NULL,"
    " scope_key TEXT NOT NULL, status_kind TEXT NOT NULL, PRIMARY KEY (fact, scope_kind, scope_key, memory_id))",
    # Each record's key in the utility order (memory_panel/store/utility.py), for sort=utility pages.
    "CREATE TABLE utility (utility_key TEXT PRIMARY KEY, memory_id TEXT NOT NULL UNIQUE, scope_kind TEXT NOT NULL,"
    " scope_key TEXT NOT NULL, status_kind TEXT NOT NULL, kind TEXT NOT NULL, trust TEXT NOT NULL) WITHOUT ROWID",
)
# One index per filter combination the panel offers, each ending in the page order.
_INDEXES = (
    "CREATE INDEX entries_order ON entries (updated_at_ms, memory_id)",
    "CREATE INDEX entries_kind_order ON entries (scope_kind, updated_at_ms, memory_id)",
    "CREATE INDEX entries_scope_order ON entries (scope_kind, scope_key, updated_at_ms, memory_id)",
    "CREATE INDEX entries_status_order ON entries (status_kind, updated_at_ms, memory_id)",
    "CREATE INDEX entries_kind_status_order ON entries (scope_kind, status_kind, updated_at_ms, memory_id)",
    "CREATE INDEX entries_scope_status_order ON entries"
    " (scope_kind, scope_key, status_kind, updated_at_ms, memory_id)",
    "CREATE INDEX entries_created ON entries (status_kind, created_at_ms, memory_id)",
    "CREATE INDEX entries_supersedes ON entries (supersedes)",
    "CREATE INDEX steward_audit_memory ON steward_audit (memory_id)",
    "CREATE INDEX tile_facts_memory ON tile_facts (memory_id)",
    "CREATE INDEX utility_scope ON utility (scope_kind, scope_key, utility_key)",
    "CREATE INDEX utility_status ON utility (status_kind, utility_key)",
)
_ENTRY_COLUMNS = (
    f"memory_id, {ORDER_MS}, created_at_ms, scope_kind, scope_key, status_kind, supersedes,"
    " LENGTH(body), kind, trust"
)
_STEWARD_AUDIT = (
    "SELECT audit_id, memory_id FROM audit WHERE audit_id > ? AND memory_id IS NOT NULL"
    " AND json_valid(detail) AND json_extract(detail, '$.author.author') = 'steward'"
)


@dataclass(frozen=True)
class IndexQuery:
    """Filters for an index page: equality filters plus what the caller can never see."""

    scope_kind: str | None = None
    scope_key: str | None = None
    status_kind: str | None = None
    kind: str | None = None
    trust: str | None = None
    hidden_scope_kinds: tuple[str, ...] = ()
    hide_quarantined: bool = False


def index_dir() -> Path:
    return conf.persistent_state() / "console" / "realm-index"


class RealmIndex:
    """One ready generation of one realm's index, caught up with the realm when handed out."""

    def __init__(self, realm: str, conn: sqlite3.Connection) -> None:
        self.realm = realm
        self.conn = conn

    def page_entries(
        self, query: IndexQuery, after: Cursor | None, limit: int
    ) -> list[tuple[int, str, str, str]]:
        """(updated_at_ms, memory_id, scope_kind, scope_key) of the next ``limit`` entries, newest first."""
        where, args = _where(query)
        if after is not None:
            predicate, predicate_args = keyset_predicate(after)
            where.append(predicate)
            args += predicate_args
        sql = "SELECT updated_at_ms, memory_id, scope_kind, scope_key FROM entries"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at_ms DESC, memory_id DESC LIMIT ?"
        return self.conn.execute(sql, [*args, limit]).fetchall()

    def page_entries_in_scopes(
        self, query: IndexQuery, scopes: Sequence[tuple[str, str]], after: Cursor | None, limit: int
    ) -> list[tuple[int, str, str, str]]:
        """As ``page_entries``, within the given scopes only: one index seek per scope, merged.

        For a caller who may read a few scopes of many, this costs the same at any depth, where
        walking the whole order and skipping other scopes' entries would grow with the realm.
        """
        entries = heapq.merge(
            *(self.page_entries(replace(query, scope_kind=kind, scope_key=key), after, limit) for kind, key in scopes),
            reverse=True,
        )
        return list(islice(entries, limit))

    def scopes(self) -> list[tuple[str, str]]:
        """Every (scope_kind, scope_key) that holds at least one record."""
        return self.conn.execute("SELECT DISTINCT scope_kind, scope_key FROM holdings WHERE records > 0").fetchall()

    def quarantined_ids(
        self, *, hidden_scope_kinds: Sequence[str], offset: int, limit: int, oldest_first: bool = False
    ) -> list[str]:
        where, args = _where(IndexQuery(status_kind="quarantined", hidden_scope_kinds=tuple(hidden_scope_kinds)))
        direction = "ASC" if oldest_first else "DESC"
        sql = (
            f"SELECT memory_id FROM entries WHERE {' AND '.join(where)}"
            f" ORDER BY created_at_ms {direction}, memory_id {direction} LIMIT ? OFFSET ?"
        )
        return [row[0] for row in self.conn.execute(sql, [*args, limit, offset])]

    def claimant_ids(self, prior_id: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT memory_id FROM entries WHERE supersedes = ? ORDER BY created_at_ms, memory_id", (prior_id,)
        )
        return [row[0] for row in rows]

    def holdings(self) -> list[tuple[str, str, str, int, int]]:
        return self.conn.execute(
            "SELECT scope_kind, scope_key, status_kind, records, body_chars FROM holdings WHERE records > 0"
        ).fetchall()

    def tile_facts(self) -> list[tuple[str, str, str, str, int]]:
        """(fact, scope_kind, scope_key, status_kind, records) for every fact the index holds."""
        return self.conn.execute(
            "SELECT fact, scope_kind, scope_key, status_kind, COUNT(*) FROM tile_facts GROUP BY 1, 2, 3, 4"
        ).fetchall()

    def tile_fact_ids(self, fact: str, scope_kind: str, scope_key: str, limit: int) -> list[str]:
        rows = self.conn.execute(
            "SELECT memory_id FROM tile_facts WHERE fact = ? AND scope_kind = ? AND scope_key = ?"
            " ORDER BY memory_id LIMIT ?",
            (fact, scope_kind, scope_key, limit),
        )
        return [row[0] for row in rows]

    def quarantined_before(self, cutoff_ms: int) -> list[tuple[str, str, int]]:
        """(scope_kind, scope_key, records) quarantined before ``cutoff_ms``: the review backlog."""
        return self.conn.execute(
            "SELECT scope_kind, scope_key, COUNT(*) FROM entries WHERE status_kind = 'quarantined'"
            " AND created_at_ms < ? GROUP BY 1, 2",
            (cutoff_ms,),
        ).fetchall()

    def utility_entries(
        self, query: IndexQuery, after: str | None, limit: int
    ) -> list[tuple[str, str, str, str]]:
        """(utility_key, memory_id, scope_kind, scope_key) of the next ``limit`` entries in the utility order."""
        where, args = _where(query)
        if after is not None:
            where.append("utility_key > ?")
            args.append(after)
        sql = "SELECT utility_key, memory_id, scope_kind, scope_key FROM utility"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY utility_key LIMIT ?"
        return self.conn.execute(sql, [*args, limit]).fetchall()

    def steward_audit_ids(self, memory_id: str) -> list[int]:
        rows = self.conn.execute("SELECT audit_id FROM steward_audit WHERE memory_id = ?", (memory_id,))
        return [row[0] for row in rows]

    def newest_steward_audit_ids(self, limit: int) -> list[int]:
        rows = self.conn.execute("SELECT audit_id FROM steward_audit ORDER BY audit_id DESC LIMIT ?", (limit,))
        return [row[0] for row in rows]


def _where(query: IndexQuery) -> tuple[list[str], list]:
    where: list[str] = []
    args: list = []
    for column in ("scope_kind", "scope_key", "status_kind", "kind", "trust"):
        value = getattr(query, column)
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if query.hide_quarantined:
        where.append("status_kind != 'quarantined'")
    if query.hidden_scope_kinds:
        where.append(f"scope_kind NOT IN ({', '.join('?' * len(query.hidden_scope_kinds))})")
        args += list(query.hidden_scope_kinds)
    return where, args


# ---------------------------------------------------------------------------------------------
# Handing out a ready, caught-up index


def realm_index(realm: str) -> RealmIndex | None:
    """The realm's index caught up with the file, or None: then read the realm directly.

    A realm file truncated or overwritten in place (or an index file that is) cannot be caught
    up with: that is "no index", never an error here. The direct read that follows then reports
    the realm itself, which an all-realm page skips (docs/realm-failures.md §1).
    """
    return once_per_request(("realm_index", realm), lambda: _checked_index(realm))


def _checked_index(realm: str) -> RealmIndex | None:
    try:
        return _ready_index(realm)
    except sqlite3.DatabaseError as error:
        logger.warning("no index for realm %r: %s", realm, error)
        return None


def _ready_index(realm: str) -> RealmIndex | None:
    if not realm_exists(realm):
        return None
    path = realm_path(realm)
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None  # gone since discovery
    conn = REALM_INDEX.caught_up(realm, path, stat)
    if conn is not None:
        return RealmIndex(realm, conn)
    # docs/realm-index.md §5, §7: no generation, or one only a rebuild can replace; read directly meanwhile.
    if REALM_INDEX.newest(realm) is not None or not _known_small(path):
        start_build(realm)
    return None


# A realm found below MIN_ROWS is not counted again for this long: every selector asks, and most
# realms are small, so the count would otherwise open a connection several times per request.
SMALL_RECHECK_SECONDS = 10.0
_small_until: dict[tuple[str, int], float] = {}


def _known_small(path: Path) -> bool:
    key = (str(path), conf.realm_index_min_rows())
    now = time.monotonic()
    if _small_until.get(key, 0.0) > now:
        return True
    if realm_rows(path) < conf.realm_index_min_rows():
        _small_until[key] = now + SMALL_RECHECK_SECONDS
        return True
    return False


def _read_delta(realm: str, source: sqlite3.Connection, high_water: int, touched: set[str]) -> tuple:
    rows = _entry_rows(source, touched)
    # A supersede's audit row names the new record; its prior changed too.
    priors = {row[6] for row in rows if row[6]} - touched
    rows += _entry_rows(source, priors)
    changed = touched | priors
    steward = source.execute(_STEWARD_AUDIT, (high_water,)).fetchall()
    facts = fact_rows(source.cursor(), ids=changed)
    utility = list(utility_rows(source.cursor(), ids=changed))
    return rows, changed, steward, facts, utility


def _apply_delta(conn: sqlite3.Connection, delta: tuple) -> None:
    rows, changed, steward, facts, utility = delta
    _apply_entries(conn, rows, missing=changed)
    conn.executemany("INSERT OR IGNORE INTO steward_audit VALUES (?, ?)", steward)
    conn.executemany("DELETE FROM tile_facts WHERE memory_id = ?", [(m,) for m in changed])
    conn.executemany("INSERT OR REPLACE INTO tile_facts VALUES (?, ?, ?, ?, ?)", facts)
    conn.executemany("DELETE FROM utility WHERE memory_id = ?", [(m,) for m in changed])
    conn.executemany("INSERT OR REPLACE INTO utility VALUES (?, ?, ?, ?, ?, ?, ?)", utility)


def _entry_rows(source: sqlite3.Connection, ids: Iterable[str]) -> list[tuple]:
    ids = list(ids)
    rows: list[tuple] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows += source.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM records WHERE memory_id IN ({', '.join('?' * len(chunk))})", chunk
        ).fetchall()
    return rows


def _apply_entries(conn: sqlite3.Connection, rows: list[tuple], *, missing: set[str]) -> None:
    """Upsert entries and move their contribution between holdings buckets."""
    present = {row[0] for row in rows}
    for memory_id in [*present, *(missing - present)]:
        old = conn.execute(
            "SELECT scope_kind, scope_key, status_kind, body_chars FROM entries WHERE memory_id = ?", (memory_id,)
        ).fetchone()
        if old is not None:
            _bump_holdings(conn, old[:3], -1, -old[3])
    conn.executemany("DELETE FROM entries WHERE memory_id = ?", [(m,) for m in missing - present])
    conn.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    for row in rows:
        _bump_holdings(conn, (row[3], row[4], row[5]), 1, row[7])


def _bump_holdings(conn: sqlite3.Connection, scope_status: tuple[str, str, str], records: int, chars: int) -> None:
    conn.execute(
        "INSERT INTO holdings VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
        " records = records + excluded.records, body_chars = body_chars + excluded.body_chars",
        (*scope_status, records, chars),
    )


# ---------------------------------------------------------------------------------------------
# Building a generation


def _fill_generation(realm: str, path: Path, out: sqlite3.Connection) -> int:
    for statement in _SCHEMA:
        out.execute(statement)
    count = _copy_snapshot(path, out)
    for statement in _INDEXES:
        out.execute(statement)
    return count


def _copy_snapshot(path: Path, out: sqlite3.Connection) -> int:
    """Copy keys, holdings and steward audit rows, all from one read transaction of the realm."""
    count = 0
    with readonly(path) as source:
        source.execute("BEGIN")
        try:
            out.execute("BEGIN")
            rows = source.execute(f"SELECT {_ENTRY_COLUMNS} FROM records")
            while batch := rows.fetchmany(BUILD_BATCH):
                out.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
                count += len(batch)
            out.executemany("INSERT INTO steward_audit VALUES (?, ?)", source.execute(_STEWARD_AUDIT, (0,)))
            out.executemany("INSERT OR REPLACE INTO tile_facts VALUES (?, ?, ?, ?, ?)", fact_rows(source.cursor()))
            out.executemany("INSERT INTO utility VALUES (?, ?, ?, ?, ?, ?, ?)", utility_rows(source.cursor()))
            out.execute(
                "INSERT INTO holdings SELECT scope_kind, scope_key, status_kind, COUNT(*), SUM(body_chars)"
                " FROM entries GROUP BY 1, 2, 3"
            )
            set_meta(out, **snapshot_high_water(source))
            out.execute("COMMIT")
        finally:
            source.rollback()
    return count


REALM_INDEX = IndexFamily(
    name="realm-index",
    schema_version=SCHEMA_VERSION,
    fill=_fill_generation,
    read_delta=_read_delta,
    apply_delta=_apply_delta,
)


def build(realm: str) -> Path | None:
    return REALM_INDEX.build(realm)


def start_build(realm: str) -> None:
    """Build a new generation in the background, unless one is already being built here."""
    REALM_INDEX.start_build(realm)
