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

import fcntl
import heapq
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import TypeVar

from memory_panel import conf

from memory_panel.cursor import ORDER_MS, Cursor, keyset_predicate
from memory_panel.store.realms import connect_readonly, encode_path_segment, realm_exists, realm_path
from memory_panel.store.request_memo import once_per_request
from memory_panel.store.tile_facts import fact_rows
from memory_panel.store.utility import utility_rows

logger = logging.getLogger("memory_panel.store.realm_index")
Delta = TypeVar("Delta")

# Above this many new audit rows a request does not catch up inline; a rebuild does.
MAX_INLINE_DELTA = 5000
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


def _realm_dir(realm: str) -> Path:
    return index_dir() / encode_path_segment(realm)


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


_local = threading.local()


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
    generation = _newest_generation(realm)
    if generation is None:
        if not _known_small(path):
            start_build(realm)
        return None
    conn = _generation_connection(generation)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    if meta.get("schema_version") != SCHEMA_VERSION:
        start_build(realm)  # written by an older console: its tables lack what this one reads
        return None
    if (meta["realm_dev"], meta["realm_ino"]) != (str(stat.st_dev), str(stat.st_ino)):
        start_build(realm)  # the realm file was replaced: this generation describes another file
        return None
    if time.time() - float(meta["built_at"]) > conf.realm_index_reconcile_seconds():
        start_build(realm)  # periodic reconciliation; this generation keeps serving meanwhile
    if not _catch_up(realm, path, conn):
        start_build(realm)
        return None
    return RealmIndex(realm, conn)


# A realm found below MIN_ROWS is not counted again for this long: every selector asks, and most
# realms are small, so the count would otherwise open a connection several times per request.
SMALL_RECHECK_SECONDS = 10.0
_small_until: dict[tuple[str, int], float] = {}


def _known_small(path: Path) -> bool:
    key = (str(path), conf.realm_index_min_rows())
    now = time.monotonic()
    if _small_until.get(key, 0.0) > now:
        return True
    if _realm_rows(path) < conf.realm_index_min_rows():
        _small_until[key] = now + SMALL_RECHECK_SECONDS
        return True
    return False


def _realm_rows(path: Path) -> int:
    # MAX(rowid) is O(1) and never below the row count of a table MobKit never deletes from.
    with _readonly(path) as realm:
        return realm.execute("SELECT COALESCE(MAX(rowid), 0) FROM records").fetchone()[0]


def _newest_generation(realm: str) -> Path | None:
    return newest_generation_in(_realm_dir(realm))


def newest_generation_in(directory: Path) -> Path | None:
    """The highest-numbered complete ``gen-<n>.sqlite3`` in ``directory`` (the search index's too)."""
    if not directory.is_dir():
        return None
    ready = sorted(directory.glob("gen-*.sqlite3"), key=lambda p: int(p.stem.split("-")[1]))
    return ready[-1] if ready else None


def _generation_connection(path: Path) -> sqlite3.Connection:
    """One connection per thread and generation file; a new generation gets a new connection."""
    cache: dict[str, sqlite3.Connection] = _local.__dict__.setdefault("connections", {})
    key = str(path)
    conn = cache.get(key)
    if conn is None:
        for stale in [k for k in cache if Path(k).parent == path.parent]:
            cache.pop(stale).close()
        conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        # The index is rebuilt from the realm whenever in doubt, so a catch-up need not wait for
        # fsync; in WAL, NORMAL still keeps it consistent across a crash.
        conn.execute("PRAGMA synchronous=NORMAL")
        cache[key] = conn
    return conn


class _readonly:
    def __init__(self, path: Path) -> None:
        self.conn = connect_readonly(path)

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def _catch_up(realm: str, path: Path, conn: sqlite3.Connection) -> bool:
    return catch_up_from_audit(path, conn, _read_delta, _apply_delta)


def catch_up_from_audit(
    path: Path,
    conn: sqlite3.Connection,
    read: Callable[[sqlite3.Connection, int, set[str]], Delta],
    apply: Callable[[sqlite3.Connection, Delta], None],
) -> bool:
    """Apply the audit rows past the high-water mark; False when only a rebuild can help.

    ``read(source, high_water, touched ids)`` gathers what the index needs from one snapshot of
    the realm; ``apply(conn, gathered)`` writes it. The search index is kept current this way too.
    """
    high_water, token = _high_water(conn)
    with _readonly(path) as source:
        source.execute("BEGIN")  # one snapshot of the realm for the whole catch-up
        try:
            newest = source.execute("SELECT COALESCE(MAX(audit_id), 0) FROM audit").fetchone()[0]
            if newest == high_water:
                return _same_audit_row(source, high_water, token)
            if newest < high_water or not _same_audit_row(source, high_water, token):
                return False  # restored or replaced in place: the history we indexed is gone
            delta = source.execute(
                "SELECT audit_id, stage_token, memory_id FROM audit WHERE audit_id > ?"
                " ORDER BY audit_id LIMIT ?",
                (high_water, MAX_INLINE_DELTA + 1),
            ).fetchall()
            if len(delta) > MAX_INLINE_DELTA:
                return False
            gathered = read(source, high_water, {memory_id for _, _, memory_id in delta if memory_id})
            last_id, last_token, _ = delta[-1]
        finally:
            source.rollback()
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _high_water(conn)[0] == high_water:  # another thread or process may have got here first
            apply(conn, gathered)
            _set_meta(conn, audit_high_water=str(last_id), audit_token=last_token)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True


def _read_delta(source: sqlite3.Connection, high_water: int, touched: set[str]) -> tuple:
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


def _high_water(conn: sqlite3.Connection) -> tuple[int, str]:
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'audit_%'"))
    return int(meta["audit_high_water"]), meta["audit_token"]


def _same_audit_row(source: sqlite3.Connection, audit_id: int, token: str) -> bool:
    if audit_id == 0:
        return True
    row = source.execute("SELECT stage_token FROM audit WHERE audit_id = ?", (audit_id,)).fetchone()
    return row is not None and row[0] == token


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


def _set_meta(conn: sqlite3.Connection, **values: str) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())


# ---------------------------------------------------------------------------------------------
# Building a generation


class BackgroundBuilds:
    """Builds run in a background thread, one per realm at a time in this process."""

    def __init__(self, build: Callable[[str], object], label: str) -> None:
        self.build = build
        self.label = label
        self.building: set[str] = set()
        self.lock = threading.Lock()

    def start(self, realm: str) -> None:
        if not conf.realm_index_background():
            self.build(realm)
            return
        with self.lock:
            if realm in self.building:
                return
            self.building.add(realm)
        threading.Thread(target=self._run, args=(realm,), name=f"{self.label}:{realm}", daemon=True).start()

    def _run(self, realm: str) -> None:
        try:
            self.build(realm)
        except Exception:
            logger.exception("building the %s of realm %r failed; pages read the realm directly", self.label, realm)
        finally:
            with self.lock:
                self.building.discard(realm)


def start_build(realm: str) -> None:
    """Build a new generation in the background, unless one is already being built here."""
    _builds.start(realm)


def build(realm: str) -> Path | None:
    return write_generation(_realm_dir(realm), realm, _fill_generation)


def _fill_generation(path: Path, out: sqlite3.Connection) -> int:
    for statement in _SCHEMA:
        out.execute(statement)
    count = _copy_snapshot(path, out)
    for statement in _INDEXES:
        out.execute(statement)
    _set_meta(out, schema_version=SCHEMA_VERSION)
    return count


def write_generation(
    directory: Path, realm: str, fill: Callable[[Path, sqlite3.Connection], int], *, wait: bool = False
) -> Path | None:
    """Write a complete new generation from one snapshot of the realm, then retire older ones.

    ``fill(realm file, new file)`` creates the schema and copies the snapshot, returning the rows
    copied. When another thread or process holds the build lock (it is building the same realm),
    returns None, or with ``wait`` waits for that build and returns the generation it wrote.
    """
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "build.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                return None
            fcntl.flock(lock, fcntl.LOCK_EX)
            return newest_generation_in(directory)
        started = time.monotonic()
        path = realm_path(realm)
        stat = path.stat()
        previous = newest_generation_in(directory)
        number = int(previous.stem.split("-")[1]) + 1 if previous else 1
        target = directory / f"gen-{number}.sqlite3"
        partial = target.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        out = sqlite3.connect(partial, isolation_level=None)
        try:
            out.execute("PRAGMA journal_mode=OFF")  # a partial file is thrown away on failure
            out.execute("PRAGMA synchronous=OFF")
            count = fill(path, out)
            _set_meta(out, realm_dev=str(stat.st_dev), realm_ino=str(stat.st_ino), built_at=str(time.time()))
            # docs/realm-failures.md §4: requests read the index while a catch-up writes it; in WAL
            # neither waits for the other (the file records the mode, so it holds after the rename).
            out.execute("PRAGMA journal_mode=WAL")
        finally:
            out.close()
        os.replace(partial, target)
        for older in directory.glob("gen-*.sqlite3"):
            if older != target:
                older.unlink(missing_ok=True)  # open connections keep reading it until they move on
        logger.info("Indexed realm %r for fast paging and search (%s): %d records in %.1f s.", realm,
                    directory.parent.name, count, time.monotonic() - started)
        return target


_builds = BackgroundBuilds(build, "realm-index")


def _copy_snapshot(path: Path, out: sqlite3.Connection) -> int:
    """Copy keys, holdings and steward audit rows, all from one read transaction of the realm."""
    count = 0
    with _readonly(path) as source:
        source.execute("BEGIN")
        try:
            newest = source.execute(
                "SELECT audit_id, stage_token FROM audit ORDER BY audit_id DESC LIMIT 1"
            ).fetchone() or (0, "")
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
            _set_meta(out, audit_high_water=str(newest[0]), audit_token=newest[1])
            out.execute("COMMIT")
        finally:
            source.rollback()
    return count
