"""A console-owned index of each realm's ordering keys, so pages cost the same at any depth.

MobKit sorts records pages by ``updated_at_ms, memory_id`` and its store has no index for that
order (docs/store-format.md §1.3), so every page is a scan of the whole table. The realm file is the
runtime's and may not be given an index, so the console keeps its own, in its own storage:

- one SQLite file per realm and *generation* under ``<persistent_state>/console/realm-index/``,
  holding each record's ordering and filter keys (never its text: rows are always read from the
  realm file, so content is never stale), the per-scope holdings counts, and the steward's audit
  rows by record — as small as SQLite allows: keyed by the realm's own ``rowid``, with every
  repeated text (scope, status, kind, trust) numbered once (docs/realm-index.md §3);
- kept current from the realm's change feed: ``audit_id`` only grows, so every request first
  applies the audit rows past the index's high-water mark (re-reading the records they name)
  before it answers — a record the runtime writes is listed by the very next request;
- rebuilt from scratch, in a background thread, when there is no index yet, when the realm file
  was replaced or restored (another inode, or the audit row at the high-water mark is gone or
  different), when the delta is too large to apply inline, or when the realm's schema changed —
  never on a timer by default. Usage counters, which move without an audit row, are followed by
  a scan when SQLite says the realm was written (docs/realm-index.md §4, §6). A new generation
  replaces the old only once complete; while no valid generation exists the selectors fall back
  to the direct query, so a rebuild never serves wrong rows. A realm too large to read directly
  gets its records order first, as a generation of its own (docs/realm-index.md §5).

Small realms skip all of this: below ``MOBKIT_REALM_INDEX_MIN_ROWS`` the direct query is cheap.
"""

from __future__ import annotations

import heapq
import logging
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from itertools import islice
from pathlib import Path

from memory_panel import conf

from memory_panel.cursor import (
    ORDER_MS,
    SQLITE_INT_MAX,
    Cursor,
    keyset_predicate,
    never_injected,
    ranked_utility_key,
    split_utility_key,
    utility_key,
)
from memory_panel.errors import RealmIndexing
from memory_panel.store.changes import ChangeWatch
from memory_panel.store.console_index.builds import BackgroundRuns
from memory_panel.store.console_index.family import (
    awaited_progress,
    first_builds_running,
    FirstStage,
    generation_stage,
    IndexFamily,
    start_first_builds,
)
from memory_panel.store.console_index.catch_up import catch_up_from_audit, snapshot_high_water
from memory_panel.store.console_index.generations import (
    GenerationReader,
    attached_realm,
    copy_in_chunks,
    generation_connection,
    readonly,
    REALM,
    realm_rows,
    rowid_range,
    set_meta,
)
from memory_panel.store.console_index.progress import ProgressReport
from memory_panel.store.console_index.numbering import (
    number_realm_texts,
    NUMBERED_REALM_ROW,
    NumberedFilters,
    Numbering,
    NUMBERING_SCHEMA,
    SCOPE_TEXT,
)
from memory_panel.store.realms import realm_exists, realm_path
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.records import AUTHOR_KIND, author_code, author_code_sql
from memory_panel.store.request_memo import once_per_request
from memory_panel.store.tile_facts import fact_rows, usage_sql
from memory_panel.store.utility import USAGE_COLUMNS, utility_rank_of

logger = logging.getLogger("memory_panel.store.realm_index")

# Bumped whenever the index's tables change: a generation of another version is rebuilt.
SCHEMA_VERSION = "5"
RANK_BYTES = 26  # a utility rank (memory_panel/cursor.py) is below 10**61 < 2**208

# docs/realm-index.md §3. Columns holding a realm's own values have no declared type, so a value
# a hand edit left as a number or a BLOB is kept as it is, as the direct read sees it.
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    *NUMBERING_SCHEMA,
    "CREATE TABLE entries (entry INTEGER PRIMARY KEY, memory_id TEXT NOT NULL, updated_at_ms INTEGER NOT NULL,"
    " created_at_ms NOT NULL, scope_kind INTEGER NOT NULL, scope INTEGER NOT NULL, status INTEGER NOT NULL,"
    " kind INTEGER NOT NULL, trust INTEGER NOT NULL, supersedes, body_chars NOT NULL, injected, useful, utility BLOB,"
    # The author kind's code (``store.records.author_code``): a byte a row, where the text would be many.
    " author INTEGER NOT NULL)",
    "CREATE TABLE holdings (scope INTEGER NOT NULL, status INTEGER NOT NULL, records INTEGER NOT NULL,"
    " body_chars INTEGER NOT NULL, PRIMARY KEY (scope, status)) WITHOUT ROWID",
    "CREATE TABLE steward_audit (audit_id INTEGER PRIMARY KEY, memory_id TEXT NOT NULL)",
    # The Holdings verdict tiles' per-record facts (memory_panel/store/tile_facts.py).
    "CREATE TABLE tile_facts (fact TEXT NOT NULL, scope INTEGER NOT NULL, memory_id TEXT NOT NULL,"
    " status INTEGER NOT NULL, PRIMARY KEY (fact, scope, memory_id)) WITHOUT ROWID",
)
# Created after the load (docs/realm-index.md §5). Each ends in the page order's first column; ties
# in updated_at_ms (few) are ordered by memory_id from the table row. Kind and trust filters ride on
# these. The utility order holds only records ever injected: the rest sort last, in the records
# order (docs/panel-tabs.md §3), which the order indexes already give.
_INDEXES = (
    "CREATE INDEX entries_order ON entries (updated_at_ms)",
    "CREATE INDEX entries_kind_order ON entries (scope_kind, updated_at_ms)",
    "CREATE INDEX entries_scope_order ON entries (scope, updated_at_ms)",
    "CREATE INDEX entries_status_order ON entries (status, updated_at_ms)",
    "CREATE INDEX entries_created ON entries (status, created_at_ms)",
    "CREATE INDEX entries_supersedes ON entries (supersedes) WHERE supersedes IS NOT NULL",
    "CREATE INDEX entries_utility ON entries (utility) WHERE utility IS NOT NULL",
    "CREATE INDEX entries_scope_utility ON entries (scope, utility) WHERE utility IS NOT NULL",
    "CREATE INDEX entries_status_utility ON entries (status, utility) WHERE utility IS NOT NULL",
    "CREATE INDEX steward_audit_memory ON steward_audit (memory_id)",
    "CREATE INDEX tile_facts_memory ON tile_facts (memory_id)",
)
# What the index keeps of one records row, in this order (the realm's rowid first).
_SOURCE_COLUMNS = (
    f"r.rowid, r.memory_id, {ORDER_MS}, r.created_at_ms, r.scope_kind, r.scope_key, r.status_kind, r.kind,"
    f" r.trust, r.supersedes, LENGTH(r.body), {USAGE_COLUMNS}, LENGTH(CAST(r.body AS BLOB)),"
    f" {author_code_sql(AUTHOR_KIND)}"
)
_STEWARD_AUDIT = (
    "SELECT audit_id, memory_id FROM {db}.audit WHERE audit_id > ? AND memory_id IS NOT NULL"
    " AND json_valid(detail) AND json_extract(detail, '$.author.author') = 'steward'"
)
# docs/realm-index.md §5: every entry of the attached realm (a range of rowids at a time), in rowid order (the entries' key order,
# so each insert appends, and the order SQLite scans the table in: no sort). Only a record ever
# injected calls back into Python for its utility rank.
_COPY_ENTRIES = (
    "INSERT INTO entries SELECT r.rowid, r.memory_id, r.updated, r.created_at_ms, s.kind_label, s.scope, st.label,"
    " k.label, t.label, r.supersedes, r.chars, r.injected, r.useful,"
    " CASE WHEN r.injected IS 0 THEN NULL ELSE utility_rank(r.injected, r.useful, r.body_bytes, r.updated) END,"
    " r.author"
    f" FROM (SELECT r.rowid AS rowid, r.memory_id, {ORDER_MS} AS updated, r.created_at_ms, r.scope_kind, r.scope_key,"
    " r.status_kind, r.kind, r.trust, r.supersedes, LENGTH(r.body) AS chars,"
    f" {usage_sql('injected_count')} AS injected, {usage_sql('judged_useful_count')} AS useful,"
    f" LENGTH(CAST(r.body AS BLOB)) AS body_bytes, {author_code_sql(AUTHOR_KIND)} AS author"
    f" FROM {REALM}.records r WHERE r.rowid > ? AND r.rowid <= ?) r {NUMBERED_REALM_ROW} ORDER BY r.rowid"
)
# An entry's scope as text, for the rows a page returns.
_SCOPE_TEXT = SCOPE_TEXT.format(alias="e")


def index_dir() -> Path:
    return conf.persistent_state() / "console" / "realm-index"


class RealmIndex(GenerationReader):
    """One ready generation of one realm's index, caught up with the realm when handed out."""

    def __init__(self, realm: str, generation: Path) -> None:
        super().__init__(realm, generation)
        # docs/realm-index.md §5: a first-stage generation holds the entries and their order alone.
        self.complete = generation_stage(self.conn) is None

    def page_entries(
        self, filters: RecordFilter, after: Cursor | None, limit: int, *, never_injected_only: bool = False
    ) -> list[tuple[int, str, str, str]]:
        """(updated_at_ms, memory_id, scope_kind, scope_key) of the next ``limit`` entries, newest first.

        Kept to a list of scopes (``filters.scopes``), it is one index seek per scope, merged: for a
        caller who may read a few scopes of many, this costs the same at any depth, where walking
        the whole order and skipping other scopes' entries would grow with the realm.
        """
        if filters.scopes is not None:
            entries = heapq.merge(
                *(
                    self.page_entries(
                        replace(filters, scope_kind=kind, scope_key=key, scopes=None), after, limit,
                        never_injected_only=never_injected_only,
                    )
                    for kind, key in filters.scopes
                ),
                reverse=True,
            )
            return list(islice(entries, limit))
        where, args = self._where(filters)
        if never_injected_only:
            where.append("e.utility IS NULL")
        if after is not None:
            predicate, predicate_args = keyset_predicate(after, order_ms="e.updated_at_ms")
            if predicate_args:  # the bound first, so SQLite seeks the index there
                where.append("e.updated_at_ms <= ?")
                args.append(after.updated_at_ms)
            where.append(predicate)
            args += predicate_args
        sql = (
            f"SELECT e.updated_at_ms, e.memory_id, l.text, s.scope_key FROM entries e {_SCOPE_TEXT}"
            f"{_where_sql(where)} ORDER BY e.updated_at_ms DESC, e.memory_id DESC LIMIT ?"
        )
        return self.conn.execute(sql, [*args, limit]).fetchall()

    def scopes(self) -> list[tuple[str, str]]:
        """Every (scope_kind, scope_key) that holds at least one record."""
        if not self.complete:  # no holdings yet: every scope numbered holds a record (MobKit never deletes)
            return self.conn.execute(
                "SELECT l.text, s.scope_key FROM scopes s CROSS JOIN labels l ON l.label = s.scope_kind"
            ).fetchall()
        return self.conn.execute(
            "SELECT l.text, s.scope_key FROM scopes s CROSS JOIN labels l ON l.label = s.scope_kind"
            " WHERE EXISTS (SELECT 1 FROM holdings h WHERE h.scope = s.scope AND h.records > 0)"
        ).fetchall()

    def queue_ids(self, filters: RecordFilter, *, offset: int, limit: int, oldest_first: bool = False) -> list[str]:
        """Ids of the entries ``filters`` keeps in the quarantine queue's order: by creation, newest first."""
        where, args = self._where(filters)
        direction = "ASC" if oldest_first else "DESC"
        sql = (
            f"SELECT e.memory_id FROM entries e{_where_sql(where)}"
            f" ORDER BY e.created_at_ms {direction}, e.memory_id {direction} LIMIT ? OFFSET ?"
        )
        return [row[0] for row in self.conn.execute(sql, [*args, limit, offset])]

    def claimant_ids(self, prior_id: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT memory_id FROM entries WHERE supersedes = ? AND supersedes IS NOT NULL"
            " ORDER BY created_at_ms, memory_id",
            (prior_id,),
        )
        return [row[0] for row in rows]

    def holdings(self) -> list[tuple[str, str, str, int, int]]:
        return self.conn.execute(
            "SELECT l.text, s.scope_key, st.text, h.records, h.body_chars FROM holdings h"
            " CROSS JOIN scopes s ON s.scope = h.scope CROSS JOIN labels l ON l.label = s.scope_kind"
            " CROSS JOIN labels st ON st.label = h.status WHERE h.records > 0"
        ).fetchall()

    def tile_facts(self) -> list[tuple[str, str, str, str, int]]:
        """(fact, scope_kind, scope_key, status_kind, records) for every fact the index holds."""
        return self.conn.execute(
            "SELECT f.fact, l.text, s.scope_key, st.text, f.records FROM"
            " (SELECT fact, scope, status, COUNT(*) AS records FROM tile_facts GROUP BY 1, 2, 3) f"
            " CROSS JOIN scopes s ON s.scope = f.scope CROSS JOIN labels l ON l.label = s.scope_kind"
            " CROSS JOIN labels st ON st.label = f.status"
        ).fetchall()

    def tile_fact_ids(self, fact: str, scope_kind: str, scope_key: str, limit: int) -> list[str]:
        rows = self.conn.execute(
            "SELECT memory_id FROM tile_facts WHERE fact = ? AND scope IN (SELECT s.scope FROM scopes s"
            " JOIN labels l ON l.label = s.scope_kind WHERE l.text = ? AND s.scope_key = ?)"
            " ORDER BY memory_id LIMIT ?",
            (fact, scope_kind, scope_key, limit),
        )
        return [row[0] for row in rows]

    def quarantined_before(self, cutoff_ms: int) -> list[tuple[str, str, int]]:
        """(scope_kind, scope_key, records) quarantined before ``cutoff_ms``: the review backlog."""
        where, args = self._where(RecordFilter(status="quarantined"))
        return self.conn.execute(
            "SELECT l.text, s.scope_key, q.records FROM (SELECT e.scope AS scope, COUNT(*) AS records"
            f" FROM entries e{_where_sql([*where, 'e.created_at_ms < ?'])} GROUP BY 1) q"
            " CROSS JOIN scopes s ON s.scope = q.scope CROSS JOIN labels l ON l.label = s.scope_kind",
            [*args, cutoff_ms],
        ).fetchall()

    def quarantine_backlog(self) -> tuple[int, int | None]:
        """(records quarantined, the oldest one's created_at_ms or None)."""
        where, args = self._where(RecordFilter(status="quarantined"))
        return self.conn.execute(
            f"SELECT COUNT(*), MIN(e.created_at_ms) FROM entries e{_where_sql(where)}", args
        ).fetchone()

    def utility_entries(self, filters: RecordFilter, after: str | None, limit: int) -> list[tuple[str, str, str, str]]:
        """(utility_key, memory_id, scope_kind, scope_key) of the next ``limit`` entries in the utility order.

        Records ever injected come first, by their rank; the rest (never injected) follow in the
        records order, newest first (docs/realm-index.md §3).
        """
        rank, memory_id = split_utility_key(after) if after is not None else (None, "")
        found: list[tuple[str, str, str, str]] = []
        recency_after: Cursor | None = None
        if rank is None or not never_injected(rank):
            where, args = self._where(filters)
            where.append("e.utility IS NOT NULL")
            if rank is not None:
                bound = rank.to_bytes(RANK_BYTES, "big")
                where += ["e.utility >= ?", "(e.utility > ? OR e.memory_id < ?)"]
                args += [bound, bound, memory_id]
            rows = self.conn.execute(
                f"SELECT e.utility, e.memory_id, l.text, s.scope_key FROM entries e {_SCOPE_TEXT}"
                f"{_where_sql(where)} ORDER BY e.utility, e.memory_id DESC LIMIT ?",
                [*args, limit],
            )
            found = [(ranked_utility_key(int.from_bytes(r, "big"), m), m, kind, key) for r, m, kind, key in rows]
            if len(found) == limit:
                return found
        else:
            recency_after = Cursor(_rank_updated_at_ms(rank), memory_id)
        rest = self.page_entries(filters, recency_after, limit - len(found), never_injected_only=True)
        return found + [
            (utility_key(injected=0, useful=0, body_bytes=0, updated_at_ms=ms, memory_id=m), m, kind, key)
            for ms, m, kind, key in rest
        ]

    def steward_audit_ids(self, memory_id: str) -> list[int]:
        rows = self.conn.execute("SELECT audit_id FROM steward_audit WHERE memory_id = ?", (memory_id,))
        return [row[0] for row in rows]

    def newest_steward_audit_ids(self, limit: int) -> list[int]:
        rows = self.conn.execute("SELECT audit_id FROM steward_audit ORDER BY audit_id DESC LIMIT ?", (limit,))
        return [row[0] for row in rows]

    def _where(self, filters: RecordFilter) -> tuple[list[str], list]:
        """The filters as conditions on ``entries e``, their texts turned into their numbers."""
        numbered = NumberedFilters(self.conn, "e")
        numbered.records(filters)
        if filters.hide_reviewer_only:
            # An entry has no ever_quarantined: the row check leaves out the retired evidence.
            numbered.exclude("status", ["quarantined"])
        if filters.author is not None:  # a row filter on the order walked, as kind and trust are
            numbered.where.append("e.author = ?")
            numbered.args.append(author_code(filters.author))
        return numbered.where, numbered.args


def _where_sql(where: list[str]) -> str:
    return " WHERE " + " AND ".join(where) if where else ""


def _rank_updated_at_ms(rank: int) -> int:
    # The rank's last 19 digits are the complemented updated_at_ms (memory_panel/cursor.py).
    return SQLITE_INT_MAX - rank % 10**19


# ---------------------------------------------------------------------------------------------
# Handing out a ready, caught-up index


def realm_index(
    realm: str, *, ordering_serves: bool = False, direct_scope: tuple[str, str] | None = None
) -> RealmIndex | None:
    """The realm's index caught up with the file, or None: then read the realm directly.

    A realm file truncated or overwritten in place (or an index file that is) cannot be caught
    up with: that is "no index", never an error here. The direct read that follows then reports
    the realm itself, which an all-realm page skips (docs/realm-failures.md §1).

    A first-stage generation (the entries and their order alone, docs/realm-index.md §5) is
    handed out only to a read it serves (``ordering_serves``); to any other it is no index yet.

    Raises ``RealmIndexing`` when the realm is too large to read directly
    (``MOBKIT_REALM_DIRECT_MAX_ROWS``) and its index is being built, unless the read is of one scope
    (``direct_scope``, which the realm's own scope index finds) holding fewer rows than that
    (docs/realm-index.md §7).
    """
    index = once_per_request(("realm_index", realm), lambda: _checked_index(realm))
    if index is not None and not index.complete and not ordering_serves:
        index = None
    if index is None:
        _refuse_while_indexing(realm, direct_scope)
    return index


def _checked_index(realm: str) -> RealmIndex | None:
    try:
        return _ready_index(realm)
    except sqlite3.DatabaseError as error:
        logger.warning("no index for realm %r: %s", realm, error)
        return None


def _refuse_while_indexing(realm: str, scope: tuple[str, str] | None) -> None:
    """docs/realm-index.md §7: a direct read of a realm (or scope) this large would run past the time limit."""
    path = realm_path(realm)
    limit = conf.realm_direct_max_rows()
    try:
        if _known_small(path) or realm_rows(path) < limit:
            return
        if scope is not None and _scope_rows(path, scope, limit) < limit:
            return  # the store's scope index finds those rows in time
    except sqlite3.DatabaseError:
        return  # the direct read that follows reports the realm (docs/realm-failures.md §1)
    raise RealmIndexing(realm, awaited_progress(REALM_INDEX, realm))


def _scope_rows(path: Path, scope: tuple[str, str], limit: int) -> int:
    """The scope's rows, counted no further than ``limit`` on the store's scope index (no row read)."""
    with readonly(path) as source:
        return source.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM records WHERE scope_kind = ? AND scope_key = ? LIMIT ?)",
            (*scope, limit),
        ).fetchone()[0]


def _ready_index(realm: str) -> RealmIndex | None:
    if not realm_exists(realm):
        return None
    path = realm_path(realm)
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None  # gone since discovery
    if _known_small(path):
        # Read directly, as a realm below MIN_ROWS always is: no look for generations, which at
        # 500 small realms would be two directory listings each, per request.
        return None
    generation = REALM_INDEX.caught_up(realm, path, stat)
    if generation is not None:
        index = RealmIndex(realm, generation)
        # docs/realm-index.md §4: no usage scan while the realm's first builds run here (the index
        # was just copied, and the scan would compete with them); the look waits for them.
        building = first_builds_running(realm)
        if not index.complete and not building:
            start_build(realm)  # docs/realm-index.md §5: a first stage whose builder stopped; complete it
        elif index.complete and not building and _usage_watch.changed(path, period=conf.realm_index_usage_seconds()):
            _usage_follower.start(realm)
        return index
    # docs/realm-index.md §5, §7: no generation, or one only a rebuild can replace; read directly meanwhile.
    if REALM_INDEX.newest(realm) is not None:
        start_build(realm)
    else:
        start_first_builds(realm)
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


def _entry(numbering: Numbering, row: tuple) -> tuple:
    """The ``entries`` row of one ``_SOURCE_COLUMNS`` row."""
    rowid, memory_id, updated, created, scope_kind, scope_key, status, kind, trust, supersedes, chars, *rest = row
    injected, useful, body_bytes, author = rest
    kind_label = numbering.label(scope_kind)
    return (
        rowid, memory_id, updated, created, kind_label, numbering.scope(kind_label, scope_key), numbering.label(status),
        numbering.label(kind), numbering.label(trust), supersedes, chars, injected, useful,
        _utility_rank(injected, useful, body_bytes, updated), author,
    )


def _utility_rank(injected: object, useful: object, body_bytes: object, updated_at_ms: int) -> bytes | None:
    """An entry's ``utility``: its rank as bytes, or None when never injected (the records order, §3)."""
    if int(injected or 0) <= 0:
        return None
    rank = utility_rank_of(injected=injected, useful=useful, body_bytes=body_bytes, updated_at_ms=updated_at_ms)
    return rank.to_bytes(RANK_BYTES, "big")


def follow_usage(realm: str) -> None:
    """Re-read the records whose usage counters moved since the index read them (docs/realm-index.md §4).

    MobKit moves ``usage_stats`` without an audit row, so the audit feed never names them: one
    scan of the counters in rowid order, beside the index's own in the same order, finds them,
    and a catch-up re-reads just those (their utility rank, DEAD, the tile facts).
    """
    generation = REALM_INDEX.newest(realm)
    if generation is None:
        return
    path = realm_path(realm)
    conn = generation_connection(generation)
    moved = _usage_moved(path, conn)
    if moved and not catch_up_from_audit(path, conn, partial(_read_delta, realm), _apply_delta,
                                         family=REALM_INDEX.name, realm=realm, also=moved):
        start_build(realm)


def _usage_moved(path: Path, conn: sqlite3.Connection) -> list[str]:
    moved: list[str] = []
    indexed = conn.execute("SELECT entry, injected, useful FROM entries ORDER BY entry")
    current = next(indexed, None)
    with readonly(path) as source:
        for rowid, memory_id, injected, useful in source.execute(
            f"SELECT r.rowid, r.memory_id, {USAGE_COLUMNS} FROM records r ORDER BY r.rowid"
        ):
            while current is not None and current[0] < rowid:
                current = next(indexed, None)
            if current is not None and current[0] == rowid and (current[1], current[2]) != (injected, useful):
                moved.append(memory_id)
    indexed.close()
    return moved


_usage_watch = ChangeWatch()
_usage_follower = BackgroundRuns("following the usage counters", follow_usage, again_if_asked=True)


def _read_delta(realm: str, source: sqlite3.Connection, high_water: int, touched: set[str]) -> tuple:
    rows = _source_rows(source, touched)
    # A supersede's audit row names the new record; its prior changed too.
    priors = {row[9] for row in rows if isinstance(row[9], str)} - touched
    rows += _source_rows(source, priors)
    changed = touched | priors
    steward = source.execute(_STEWARD_AUDIT.format(db="main"), (high_water,)).fetchall()
    facts = fact_rows(source.cursor(), ids=changed)
    return rows, changed, steward, facts


def _apply_delta(conn: sqlite3.Connection, delta: tuple) -> bool:
    rows, changed, steward, facts = delta
    numbering = Numbering(conn)
    if not _apply_entries(conn, numbering, rows):
        return False
    # Gone from the realm (a hand delete; MobKit never deletes): found by a scan, as rare as that is.
    for memory_id in changed - {row[1] for row in rows}:
        for entry, scope, status, chars in conn.execute(
            "SELECT entry, scope, status, body_chars FROM entries WHERE memory_id = ?", (memory_id,)
        ).fetchall():
            _bump_holdings(conn, scope, status, -1, -(chars or 0))
            conn.execute("DELETE FROM entries WHERE entry = ?", (entry,))
    conn.executemany("INSERT OR IGNORE INTO steward_audit VALUES (?, ?)", steward)
    conn.executemany("DELETE FROM tile_facts WHERE memory_id = ?", [(m,) for m in changed])
    conn.executemany("INSERT OR REPLACE INTO tile_facts VALUES (?, ?, ?, ?)", _fact_entries(numbering, facts))
    return True


def _source_rows(source: sqlite3.Connection, ids: Iterable[str]) -> list[tuple]:
    ids = list(ids)
    rows: list[tuple] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows += source.execute(
            f"SELECT {_SOURCE_COLUMNS} FROM records r WHERE r.memory_id IN ({', '.join('?' * len(chunk))})", chunk
        ).fetchall()
    return rows


def _apply_entries(conn: sqlite3.Connection, numbering: Numbering, rows: list[tuple]) -> bool:
    """Upsert entries and move their contribution between holdings buckets; False if rowids moved.

    MobKit never deletes from ``records``, so a record keeps its rowid. A row whose rowid the index
    holds for another record (a hand delete, then VACUUM) means only a rebuild can help.
    """
    for row in rows:
        entry = _entry(numbering, row)
        old = conn.execute(
            "SELECT memory_id, scope, status, body_chars FROM entries WHERE entry = ?", (entry[0],)
        ).fetchone()
        if old is not None:
            if old[0] != entry[1]:
                return False
            _bump_holdings(conn, old[1], old[2], -1, -(old[3] or 0))
        conn.execute(f"INSERT OR REPLACE INTO entries VALUES ({', '.join('?' * len(entry))})", entry)
        _bump_holdings(conn, entry[5], entry[6], 1, entry[10] or 0)
    return True


def _bump_holdings(conn: sqlite3.Connection, scope: int, status: int, records: int, chars: int) -> None:
    conn.execute(
        "INSERT INTO holdings VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
        " records = records + excluded.records, body_chars = body_chars + excluded.body_chars",
        (scope, status, records, chars),
    )


def _fact_entries(numbering: Numbering, facts: Iterable[tuple]) -> list[tuple]:
    entries = []
    for fact, memory_id, scope_kind, scope_key, status in facts:
        kind = numbering.label(scope_kind)
        entries.append((fact, numbering.scope(kind, scope_key), memory_id, numbering.label(status)))
    return sorted(entries, key=lambda entry: entry[:3])


# ---------------------------------------------------------------------------------------------
# Building a generation


# A build's phases and their shares of its time, measured at 1,000,000 records (docs/realm-index.md §5).
_BUILD_PHASES = (
    ("numbering texts", 10), ("copying records", 30), ("counting holdings and tile facts", 35), ("sorting indexes", 25),
)
# docs/realm-index.md §5: a realm too large to read directly is built in two stages, each its own
# generation. The first holds the entries and their order alone: it serves the unfiltered records pages.
ORDERING = "ordering"
_ORDERING_PHASES = (("numbering texts", 25), ("copying records", 55), ("sorting the records order", 20))
_COMPLETING_PHASES = (
    ("copying the records order", 10), ("counting holdings and tile facts", 45), ("sorting indexes", 45),
)
# The first of ``_INDEXES``: what the first stage sorts.
_ORDER_INDEX, *_OTHER_INDEXES = _INDEXES


def _fill_generation(realm: str, path: Path, out: sqlite3.Connection, progress: ProgressReport) -> int:
    """The whole generation from one snapshot of the realm."""
    count = _fill_entries(out, path, progress, the_rest=True)
    _sort_indexes(out, _INDEXES, progress)
    return count


def _fill_ordering(realm: str, path: Path, out: sqlite3.Connection, progress: ProgressReport) -> int:
    """The first stage: the entries and their order, from one snapshot of the realm."""
    count = _fill_entries(out, path, progress, the_rest=False)
    set_meta(out, stage=ORDERING)
    progress.enter("sorting the records order")
    out.execute(_ORDER_INDEX)
    return count


def _complete_ordering(realm: str, path: Path, out: sqlite3.Connection, progress: ProgressReport) -> int:
    """The second stage: a copy of the first-stage generation, completed from the realm.

    The copy keeps the entries as caught up to its high-water mark, and that mark. Holdings are
    counted from those entries; the tile facts and steward audit rows come from the realm as it is
    now, which may be past the mark: the catch-up after it re-reads the records the audit rows past
    the mark name (their tile facts with them), and steward audit rows are only ever added
    (docs/realm-index.md §4).
    """
    progress.enter("copying the records order")
    ordering = REALM_INDEX.newest(realm)
    if ordering is None or REALM_INDEX.stage_of(ordering) != ORDERING:
        raise RuntimeError(f"realm {realm!r} has no first-stage index to complete")
    generation_connection(ordering).backup(out)
    out.execute("PRAGMA main.journal_mode=OFF")  # the copy took the first stage's WAL mode
    out.execute("DELETE FROM meta WHERE key = 'stage'")
    with attached_realm(out, path):
        _count_the_rest(out, Numbering(out), progress)
    _sort_indexes(out, _OTHER_INDEXES, progress)
    return out.execute("SELECT COUNT(*) FROM entries").fetchone()[0]


def _fill_entries(out: sqlite3.Connection, path: Path, progress: ProgressReport, *, the_rest: bool) -> int:
    """Copy the keys (and, with ``the_rest``, holdings, steward audit rows and tile facts) from the
    attached realm's one snapshot, with its high-water mark.

    docs/realm-index.md §5: all of it ``INSERT … SELECT`` inside SQLite; Python numbers each
    distinct text once and ranks the few records ever injected.
    """
    for statement in _SCHEMA:
        out.execute(statement)
    out.create_function("utility_rank", 4, _utility_rank, deterministic=True)
    with attached_realm(out, path):
        progress.enter("numbering texts")
        numbering = number_realm_texts(out)
        progress.enter("copying records")
        first, last = rowid_range(out)
        count = copy_in_chunks(out, _COPY_ENTRIES, progress, first=first, last=last)
        if the_rest:
            _count_the_rest(out, numbering, progress)
        set_meta(out, **snapshot_high_water(out))
    return count


def _count_the_rest(out: sqlite3.Connection, numbering: Numbering, progress: ProgressReport) -> None:
    """Holdings from the entries; steward audit rows and tile facts from the attached realm."""
    progress.enter("counting holdings and tile facts")
    out.execute("DELETE FROM holdings")  # a first stage's catch-ups left deltas alone there
    # GROUP BY hands the buckets over in key order: each insert appends.
    out.execute(
        "INSERT INTO holdings SELECT scope, status, COUNT(*), COALESCE(SUM(body_chars), 0) FROM entries"
        " GROUP BY scope, status"
    )
    out.execute(f"INSERT OR IGNORE INTO steward_audit {_STEWARD_AUDIT.format(db=REALM)}", (0,))
    out.execute("DELETE FROM tile_facts")
    facts = _fact_entries(numbering, fact_rows(out.cursor(), db=REALM))
    out.executemany("INSERT INTO tile_facts VALUES (?, ?, ?, ?)", facts)


def _sort_indexes(out: sqlite3.Connection, indexes: Iterable[str], progress: ProgressReport) -> None:
    progress.enter("sorting indexes")
    indexes = list(indexes)
    for done, statement in enumerate(indexes, 1):
        out.execute(statement)
        progress.step(done / len(indexes))


def _staged(realm: str) -> bool:
    """docs/realm-index.md §5: a realm too large to read directly (§7) gets its order first."""
    try:
        return realm_rows(realm_path(realm)) >= conf.realm_direct_max_rows()
    except (sqlite3.DatabaseError, FileNotFoundError):
        return False


REALM_INDEX = IndexFamily(
    name="realm-index",
    schema_version=SCHEMA_VERSION,
    fill=_fill_generation,
    phases=_BUILD_PHASES,
    read_delta=_read_delta,
    apply_delta=_apply_delta,
    cold_start_order=0,
    first_stage=FirstStage(
        name=ORDERING, wanted=_staged, fill=_fill_ordering, phases=_ORDERING_PHASES, complete=_complete_ordering,
        complete_phases=_COMPLETING_PHASES,
    ),
)


def build(realm: str) -> Path | None:
    return REALM_INDEX.build(realm)


def start_build(realm: str) -> None:
    """Build a new generation in the background, unless one is already being built here."""
    REALM_INDEX.start_build(realm)
