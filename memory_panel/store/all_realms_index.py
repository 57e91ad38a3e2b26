"""One console-wide ordering index over every small realm, so an all-realm page reads one index.

A records page across realms used to read every realm: at 500 realms of 2,000 records that is
500 queries for one page of 50 rows, where one realm of the same million records answers from
its realm index in one. This file keeps the ordering and filter keys of every realm below
``MOBKIT_REALM_INDEX_MIN_ROWS`` rows (those with no realm index of their own) in one SQLite file,
``<persistent_state>/console/all-realms.sqlite3``, so an all-realm page is one keyset query here,
merged with the few large realms' own indexes, and rows are read only from the realms that hold
the page's rows (docs/realm-index.md §10).

- A realm's keys are copied whole, inside SQLite (the realm attached read-only), whenever its
  file's signature (``memory_panel/store/changes.py``) moved since the last copy: a small realm
  costs a few milliseconds to copy, and copying whole needs no audit bookkeeping, so a realm
  replaced, restored or migrated is right at the next request like one written through MobKit.
- The signature is taken before the copy reads, so a write that lands during the copy moves it
  and is copied next time. Rows are always read from the realm file by id and dropped when a
  write moved them since (as with the realm index), so content is never stale.
- A realm this file cannot hold (large, or in a text encoding other than UTF-8) is left to the
  per-realm path; a realm that cannot be read is skipped by the page as before. Whether a realm is
  held is decided again when ``MOBKIT_REALM_INDEX_MIN_ROWS`` is not the threshold it was decided
  under, though its file stood still: this file outlives the process that decided.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from memory_panel import conf
from memory_panel.cursor import ORDER_MS, Cursor, keyset_predicate
from memory_panel.store.console_index.generations import attached_realm
from memory_panel.store.realm_memo import realm_signature
from memory_panel.store.realms import BUSY_TIMEOUT_SECONDS, lenient_text, realm_path
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.records import AUTHOR_KIND, MemoryRecord, author_code, author_code_sql, decode_record
from memory_panel.store.search_index import TOKENIZER, FullTextIndex, Hit, document_columns, text_digest
from memory_panel.store.request_memo import once_per_request

logger = logging.getLogger("memory_panel.store.all_realms_index")

SCHEMA_VERSION = "12"
CACHE_KIB = 16_384
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # listed = 0: the realm is kept out (too large, or not attachable) and read per realm.
    # newest_dream_ms: the latest steward audit row of a dream run, the most recent any of its runs can be.
    # searched: the signature the realm's search documents were copied at ('' when not copied).
    # min_rows: the MOBKIT_REALM_INDEX_MIN_ROWS ``listed`` was decided under.
    "CREATE TABLE realms (realm INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, signature TEXT NOT NULL,"
    " listed INTEGER NOT NULL, newest_dream_ms INTEGER, searched TEXT NOT NULL DEFAULT '',"
    " min_rows INTEGER NOT NULL DEFAULT -1)",
    # Search over the small realms (docs/search.md §1): a document per record, its text in ``text``,
    # copied the first time a search needs the realm's after it changed, not with its keys.
    # A document keeps its number while its text stands (a search's windows and cursors rest on
    # them), and gets a new, higher one when its text changes, as in a realm's own search index.
    "CREATE TABLE docs (doc INTEGER PRIMARY KEY AUTOINCREMENT, realm INTEGER NOT NULL, entry INTEGER NOT NULL,"
    " memory_id NOT NULL, scope_kind, scope_key, status, kind, trust, reviewer_only INTEGER NOT NULL,"
    " updated_at_ms NOT NULL, text_hash BLOB NOT NULL, author INTEGER NOT NULL)",
    "CREATE UNIQUE INDEX docs_realm_entry ON docs (realm, entry)",
    f"CREATE VIRTUAL TABLE text USING fts5(title, body, tags, tokenize='{TOKENIZER}')",
    # Columns holding a realm's own values have no declared type: a hand-edited number stays a number.
    # Beside the keys, the record's list row as the realm holds it (``updated_raw``: its updated_at_ms
    # before the order's reading of a hand-edited one), so a page's rows need not open their realms.
    "CREATE TABLE entries (realm INTEGER NOT NULL, memory_id NOT NULL, updated_at_ms INTEGER NOT NULL,"
    " created_at_ms, scope_kind, scope_key, status, kind, trust, reviewer_only INTEGER NOT NULL,"
    " title, description, tags, provenance, status_detail, supersedes, derived_from, working_set_rank,"
    " content_hash, usage_stats, ever_quarantined, body_bytes, updated_raw,"
    # The author kind's code (``store.records.author_code``), in entries and docs alike: what the
    # Records page's author filter compares, a byte a row (docs/realm-index.md §11).
    " author INTEGER NOT NULL)",
    # The promotions waiting at the gate (the quarantine queue's second list), as the realm holds them.
    "CREATE TABLE promotions (realm INTEGER NOT NULL, pending_id, record_id, scope_kind, scope_key, rationale,"
    " status, created_at_ms)",
    # Every scope holding a record, per realm: what a caller's scope grants are checked against.
    "CREATE TABLE scopes (realm INTEGER NOT NULL, scope_kind, scope_key)",
    # docs/realm-index.md §11: each realm's facet counters, counted again whenever its keys are copied.
    "CREATE TABLE facet_counts (realm INTEGER NOT NULL, scope_kind, scope_key, status, kind, trust, author,"
    " reviewer_only INTEGER NOT NULL, records INTEGER NOT NULL)",
    "CREATE INDEX facet_counts_realm ON facet_counts (realm)",
    "CREATE INDEX scopes_realm ON scopes (realm)",
    "CREATE INDEX entries_realm ON entries (realm, memory_id)",
    "CREATE INDEX promotions_realm ON promotions (realm)",
)
# A realm's keys as they are now; only the entries that differ are deleted and inserted, so a write
# of one record moves one entry of each index, not the realm's thousands.
_NOW_ENTRIES = (
    "CREATE TEMP TABLE now_entries AS SELECT r.memory_id, {order_ms} AS updated_at_ms, r.created_at_ms, r.scope_kind,"
    " r.scope_key, r.status_kind AS status, r.kind, r.trust,"
    " (r.status_kind = 'quarantined' OR (r.status_kind = 'tombstoned' AND {ever})) AS reviewer_only,"
    " r.title, r.description, r.tags, r.provenance, r.status_detail, r.supersedes, r.derived_from,"
    " r.working_set_rank, r.content_hash, r.usage_stats, {ever_column} AS ever_quarantined,"
    " LENGTH(CAST(r.body AS BLOB)) AS body_bytes, r.updated_at_ms AS updated_raw,"
    f" {author_code_sql(AUTHOR_KIND)} AS author FROM realm.records r"
)
# The list row's columns as ``decode_record`` names them, and where the index keeps each.
_ROW_COLUMNS = (
    ("memory_id", "memory_id"), ("scope_kind", "scope_kind"), ("scope_key", "scope_key"), ("kind", "kind"),
    ("title", "title"), ("description", "description"), ("tags", "tags"), ("provenance", "provenance"),
    ("trust", "trust"), ("status_kind", "status"), ("status_detail", "status_detail"), ("supersedes", "supersedes"),
    ("derived_from", "derived_from"), ("working_set_rank", "working_set_rank"), ("content_hash", "content_hash"),
    ("created_at_ms", "created_at_ms"), ("updated_at_ms", "updated_raw"), ("usage_stats", "usage_stats"),
    ("ever_quarantined", "ever_quarantined"), ("body_bytes", "body_bytes"),
)
_ENTRY_COLUMNS = (
    "updated_at_ms", "created_at_ms", "scope_kind", "scope_key", "status", "kind", "trust", "reviewer_only",
    "title", "description", "tags", "provenance", "status_detail", "supersedes", "derived_from", "working_set_rank",
    "content_hash", "usage_stats", "ever_quarantined", "body_bytes", "updated_raw", "author",
)
_SAME_ENTRY = " AND ".join(["n.memory_id = e.memory_id", *(f"n.{c} IS e.{c}" for c in _ENTRY_COLUMNS)])
_DELETE_MOVED = (
    "DELETE FROM main.entries AS e WHERE e.realm = ? AND NOT EXISTS"
    f" (SELECT 1 FROM temp.now_entries n WHERE {_SAME_ENTRY})"
)
_INSERT_NEW = (
    f"INSERT INTO main.entries (realm, memory_id, {', '.join(_ENTRY_COLUMNS)})"
    f" SELECT ?, n.memory_id, {', '.join('n.' + c for c in _ENTRY_COLUMNS)} FROM temp.now_entries n"
    f" WHERE NOT EXISTS (SELECT 1 FROM main.entries e WHERE e.realm = ? AND {_SAME_ENTRY})"
)
# The pages' orders. A first fill of many realms creates them after the entries (one sort each,
# where inserting a million entries into them one realm at a time took minutes).
_ORDER_INDEXES = (
    "CREATE INDEX IF NOT EXISTS entries_order ON entries (updated_at_ms, memory_id)",
    "CREATE INDEX IF NOT EXISTS entries_scope_order ON entries (scope_kind, scope_key, updated_at_ms)",
    "CREATE INDEX IF NOT EXISTS entries_status_order ON entries (status, updated_at_ms)",
    "CREATE INDEX IF NOT EXISTS entries_created ON entries (status, created_at_ms)",
)
# From this many realms to copy in one request, the order indexes are built after the copies.
BULK_REALMS = 32

# A realm's facet counters from its entries (a few thousand rows: milliseconds, and only when it changed).
_COUNT_FACETS = (
    "INSERT INTO main.facet_counts SELECT r.realm, r.scope_kind, r.scope_key, r.status, r.kind, r.trust,"
    f" {AUTHOR_KIND}, r.reviewer_only, COUNT(*) FROM main.entries r WHERE r.realm = ? GROUP BY 2, 3, 4, 5, 6, 7, 8"
)
_FACET_ROW = "realm, scope_kind, scope_key, status, kind, trust, author, reviewer_only, records"

_COPY_PROMOTIONS = (
    "INSERT INTO main.promotions SELECT ?, pending_id, record_id, scope_kind, scope_key, rationale, status,"
    " created_at_ms FROM realm.pending_promotions WHERE status = 'pending'"
)
# A time no hand edit can be later than stands in for one that is not a number.
_NEWEST_DREAM = (
    "SELECT MAX(CASE WHEN typeof(applied_at_ms) = 'integer' THEN applied_at_ms ELSE 9223372036854775807 END)"
    " FROM realm.audit WHERE json_valid(detail) AND json_extract(detail, '$.author.author') = 'steward'"
    " AND json_type(detail, '$.author.run_id') = 'text'"
)
PROMOTION_COLUMNS = ("pending_id", "record_id", "scope_kind", "scope_key", "rationale", "status", "created_at_ms")


@dataclass(frozen=True)
class Entry:
    updated_at_ms: int
    memory_id: str
    realm: str
    scope_kind: str
    scope_key: str


class AllRealmsIndex:
    """The index as one request sees it: caught up with every realm it lists."""

    def __init__(
        self, conn: sqlite3.Connection, listed: dict[str, int], signatures: dict[str, str], searched: dict[str, str]
    ) -> None:
        self.conn = conn
        self.listed = listed  # realm name → its number here, for the realms this index answers for
        self.names = {number: name for name, number in listed.items()}
        self.signatures = signatures  # realm name → the signature its keys were copied at ('' untrusted)
        self.searched = searched  # realm name → the signature its search documents were copied at

    def page_entries(self, filters: RecordFilter, after: Cursor | None, limit: int) -> list[Entry]:
        """The next ``limit`` entries of the listed realms after ``after``, newest first."""
        if not self.listed:
            return []
        where, args = self.conditions(filters)
        if after is not None:
            predicate, predicate_args = keyset_predicate(after)
            if predicate_args:  # the bound first, so SQLite seeks the index there
                where.append("updated_at_ms <= ?")
                args.append(after.updated_at_ms)
            where.append(predicate)
            args += predicate_args
        return self._entries(where, args, "updated_at_ms DESC, memory_id DESC LIMIT ?", [limit])

    def records(self, entries: Iterable[Entry]) -> list[MemoryRecord]:
        """The list rows at these entries, in their order, from this index alone (no realm opened)."""
        wanted = [(self.listed[entry.realm], entry.memory_id) for entry in entries if entry.realm in self.listed]
        by_realm: dict[int, list] = {}
        for realm, memory_id in wanted:
            by_realm.setdefault(realm, []).append(memory_id)
        rows: dict[tuple[int, object], dict] = {}
        columns = ", ".join(column for _, column in _ROW_COLUMNS)
        # One lookup per realm on its (realm, memory_id) index: a row-value IN would scan them all.
        for realm, ids in by_realm.items():
            for start in range(0, len(ids), 400):
                chunk = ids[start : start + 400]
                for values in self.conn.execute(
                    f"SELECT {columns} FROM entries WHERE realm = ? AND memory_id IN ({', '.join('?' * len(chunk))})",
                    [realm, *chunk],
                ):
                    row = {name: value for (name, _), value in zip(_ROW_COLUMNS, values)}
                    rows[(realm, row["memory_id"])] = row
        return [decode_record(self.names[key[0]], rows[key]) for key in wanted if key in rows]

    def queue_entries(self, filters: RecordFilter, *, offset: int, limit: int, oldest_first: bool) -> list[Entry]:
        """Entries of the listed realms in the quarantine queue's order (created_at_ms, memory_id)."""
        if not self.listed:
            return []
        where, args = self.conditions(filters)
        direction = "ASC" if oldest_first else "DESC"
        return self._entries(where, args, f"created_at_ms {direction}, memory_id {direction} LIMIT ? OFFSET ?",
                             [limit, offset])

    def _entries(self, where: list[str], args: list, order: str, tail: list) -> list[Entry]:
        rows = self.conn.execute(
            f"SELECT updated_at_ms, memory_id, realm, scope_kind, scope_key FROM entries"
            f" WHERE {' AND '.join(where)} ORDER BY {order}",
            [*args, *tail],
        )
        return [Entry(ms, memory_id, self.names[realm], kind, key) for ms, memory_id, realm, kind, key in rows]

    def conditions(self, filters: RecordFilter) -> tuple[list[str], list]:
        """The listed realms, and ``filters`` as conditions on ``entries`` (reviewer-only rows exactly)."""
        where, args = self._listed_where()
        for column, value in filters.realm_columns().items():
            where.append(f"{'status' if column == 'status_kind' else column} = ?")
            args.append(value)
        if filters.hidden_scope_kinds:
            where.append(f"scope_kind NOT IN ({', '.join('?' * len(filters.hidden_scope_kinds))})")
            args += filters.hidden_scope_kinds
        if filters.hide_reviewer_only:
            where.append("reviewer_only = 0")
        if filters.author is not None:
            where.append("author = ?")
            args.append(author_code(filters.author))
        if filters.scopes is not None:
            if not filters.scopes:
                where.append("0")
            else:
                where.append(f"(scope_kind, scope_key) IN (VALUES {', '.join(['(?, ?)'] * len(filters.scopes))})")
                args += [part for scope in filters.scopes for part in scope]
        return where, args

    def pending_promotions(self) -> list[tuple[str, dict]]:
        """(realm, row) of each promotion waiting at the gate in the listed realms, oldest first."""
        if not self.listed:
            return []
        where, args = self._listed_where()
        rows = self.conn.execute(
            f"SELECT realm, {', '.join(PROMOTION_COLUMNS)} FROM promotions WHERE {' AND '.join(where)}"
            " ORDER BY created_at_ms, pending_id",
            args,
        )
        return [(self.names[realm], dict(zip(PROMOTION_COLUMNS, values))) for realm, *values in rows]

    def search(self) -> AllRealmsSearch:
        """Full-text search over the listed realms, their documents copied where they changed."""
        # An untrusted signature ('') says nothing about the documents: they are looked at again.
        stale = [
            (name, number) for name, number in self.listed.items()
            if not self.signatures[name] or self.searched.get(name) != self.signatures[name]
        ]
        for name, number in stale:
            _copy_documents(self.conn, name, number, self.signatures[name])
        return AllRealmsSearch(self)

    def count(self, filters: RecordFilter, cap: int) -> int:
        """Entries of the listed realms ``filters`` keeps, counted up to ``cap + 1``."""
        if not self.listed:
            return 0
        where, args = self.conditions(filters)
        return self.conn.execute(
            f"SELECT COUNT(*) FROM (SELECT 1 FROM entries WHERE {' AND '.join(where)} LIMIT ?)", [*args, cap + 1]
        ).fetchone()[0]

    def facet_counters(self) -> list[tuple]:
        """(realm, scope_kind, scope_key, status, kind, trust, author, reviewer_only, records) of every
        listed realm's facet counters (docs/realm-index.md §11)."""
        if not self.listed:
            return []
        where, args = self._listed_where()
        rows = self.conn.execute(f"SELECT {_FACET_ROW} FROM facet_counts WHERE {where[0]}", args)
        return [(self.names[realm], *rest) for realm, *rest in rows]

    def scopes(self) -> list[tuple[str, str]]:
        """Every (scope_kind, scope_key) holding a record in a listed realm."""
        if not self.listed:
            return []
        where, args = self._listed_where()
        return self.conn.execute(f"SELECT DISTINCT scope_kind, scope_key FROM scopes WHERE {where[0]}", args).fetchall()

    def newest_dreams(self) -> dict[str, int]:
        """Each listed realm holding a dream run: no run of it ended later than this (Unix ms)."""
        where, args = self._listed_where()
        rows = self.conn.execute(
            f"SELECT realm, newest_dream_ms FROM realms WHERE {' AND '.join(where)} AND newest_dream_ms IS NOT NULL",
            args,
        )
        return {self.names[realm]: newest for realm, newest in rows}

    def _listed_where(self) -> tuple[list[str], list]:
        # Unary +: never an index on the realm (nearly every realm is listed); the orders' indexes serve.
        return [f"+realm IN ({', '.join('?' * len(self.listed))})"], list(self.listed.values())


def all_realms_index(names: Iterable[str], *, on_failure: Callable[[str, Exception], None]) -> AllRealmsIndex:
    """The index, caught up with each of ``names`` it can hold; once per request.

    ``on_failure(name, error)`` is told of a realm whose file could not be read; it is not listed.
    """
    names = tuple(names)
    return once_per_request(("all_realms_index", names), lambda: _caught_up(names, on_failure))


def _caught_up(names: tuple[str, ...], on_failure: Callable[[str, Exception], None]) -> AllRealmsIndex:
    conn = _connection()
    min_rows = conf.realm_index_min_rows()
    rows = conn.execute("SELECT realm, name, signature, listed, searched, min_rows FROM realms").fetchall()
    known = {name: (number, stored, listed, decided) for number, name, stored, listed, _, decided in rows}
    searched = {name: copied for _, name, _, _, copied, _ in rows}
    listed: dict[str, int] = {}
    signatures: dict[str, str] = {}
    due: list[tuple[str, Path, str | None]] = []
    present: list[str] = []
    for name in names:
        path = realm_path(name)
        found = realm_signature(name)
        if found is None and not path.exists():
            continue  # gone since discovery
        present.append(name)
        current = None if found is None else json.dumps(found)
        entry = known.get(name)
        # A new threshold decides again who is held, though no realm moved (a setting changed).
        if entry is None or current is None or entry[1] != current or entry[3] != min_rows:
            due.append((name, path, current))
    with _order_indexes_after(conn, len(due) >= BULK_REALMS):
        for name, path, current in due:
            try:
                known[name] = _copy(conn, name, path, current, min_rows)
            except sqlite3.DatabaseError as error:
                on_failure(name, error)
                known.pop(name, None)
    for name in present:
        entry = known.get(name)
        if entry is not None and entry[2]:
            listed[name] = entry[0]
            signatures[name] = entry[1]
    return AllRealmsIndex(conn, listed, signatures, searched)


@contextmanager
def _order_indexes_after(conn: sqlite3.Connection, bulk: bool) -> Iterator[None]:
    """With ``bulk``, the order indexes are dropped for the copies and built once after them."""
    if bulk:
        for statement in _ORDER_INDEXES:
            conn.execute(f"DROP INDEX IF EXISTS {statement.split()[5]}")
    try:
        yield
    finally:
        if bulk:
            for statement in _ORDER_INDEXES:
                conn.execute(statement)


def _copy(
    conn: sqlite3.Connection, name: str, path: Path, current: str | None, min_rows: int
) -> tuple[int, str, int, int]:
    """Copy one realm's keys afresh (or mark it as kept out, at ``min_rows`` rows or more);
    its (number, signature, listed, min_rows)."""
    stored = current or ""  # an unsettled signature is never trusted: copied again next time
    try:
        with attached_realm(conn, path, begin="BEGIN IMMEDIATE"):
            number = _realm_number(conn, name)
            conn.execute("DELETE FROM promotions WHERE realm = ?", (number,))
            conn.execute("DELETE FROM scopes WHERE realm = ?", (number,))
            conn.execute("DELETE FROM facet_counts WHERE realm = ?", (number,))
            rows = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM realm.records").fetchone()[0]
            # SQLite attaches a file of another text encoding, but compares its texts as blobs.
            same_encoding = conn.execute("PRAGMA realm.encoding").fetchone()[0] == "UTF-8"
            listed = int(rows < min_rows and same_encoding)
            newest_dream = None
            if listed:
                columns = {row[1] for row in conn.execute("PRAGMA realm.table_info(records)")}
                has_ever = "ever_quarantined" in columns
                conn.execute(_NOW_ENTRIES.format(
                    order_ms=ORDER_MS.replace("updated_at_ms", "r.updated_at_ms"),
                    ever="r.ever_quarantined IS 1" if has_ever else "0",
                    ever_column="r.ever_quarantined" if has_ever else "0",
                ))
                conn.execute("CREATE INDEX temp.now_entries_id ON now_entries (memory_id)")
                conn.execute(_DELETE_MOVED, (number,))
                conn.execute(_INSERT_NEW, (number, number))
                conn.execute(_COPY_PROMOTIONS, (number,))
                conn.execute("INSERT INTO main.scopes SELECT DISTINCT realm, scope_kind, scope_key FROM main.entries"
                             " WHERE realm = ?", (number,))
                conn.execute(_COUNT_FACETS, (number,))
                newest_dream = conn.execute(_NEWEST_DREAM).fetchone()[0]
            else:
                conn.execute("DELETE FROM entries WHERE realm = ?", (number,))
            conn.execute("UPDATE realms SET signature = ?, listed = ?, newest_dream_ms = ?, min_rows = ?"
                         " WHERE realm = ?", (stored, listed, newest_dream, min_rows, number))
    finally:
        conn.execute("DROP TABLE IF EXISTS temp.now_entries")
    return number, stored, listed, min_rows


_DOC_KEYS = "memory_id, scope_kind, scope_key, status, kind, trust, reviewer_only, updated_at_ms, author"
# What the realm holds now, one row per record, as a document of it.
_NOW_DOCS = (
    "CREATE TEMP TABLE now_docs AS SELECT r.entry, r.memory_id, r.scope_kind, r.scope_key, r.status_kind AS status,"
    f" r.kind, r.trust, r.reviewer_only, r.updated_at_ms, r.digest, {author_code_sql('r.author')} AS author"
    " FROM ({rows}) r"
)
# Documents whose record is gone, moved to another rowid, or whose text changed.
_CHANGED = (
    "SELECT d.doc FROM docs d LEFT JOIN temp.now_docs n ON n.entry = d.entry WHERE d.realm = ?"
    " AND (n.entry IS NULL OR n.memory_id IS NOT d.memory_id OR n.digest IS NOT d.text_hash)"
)


def _copy_documents(conn: sqlite3.Connection, name: str, number: int, stored: str) -> None:
    """Bring one realm's search documents up to the realm (the documents its own search index holds).

    Unchanged documents keep their numbers; a changed text is a new document, numbered after all.
    """
    try:
        with attached_realm(conn, realm_path(name), begin="BEGIN IMMEDIATE"):
            conn.execute(_NOW_DOCS.format(rows=f"SELECT {document_columns(name)} FROM realm.records r"))
            conn.execute("CREATE INDEX temp.now_docs_entry ON now_docs (entry)")
            conn.execute(f"DELETE FROM text WHERE rowid IN ({_CHANGED})", (number,))
            conn.execute(f"DELETE FROM docs WHERE doc IN ({_CHANGED})", (number,))
            conn.execute(
                f"UPDATE docs SET ({_DOC_KEYS}) = (SELECT {_DOC_KEYS} FROM temp.now_docs n WHERE n.entry = docs.entry)"
                f" WHERE realm = ? AND NOT EXISTS (SELECT 1 FROM temp.now_docs n WHERE n.entry = docs.entry AND"
                f" ({_DOC_KEYS}) IS ({', '.join('docs.' + key for key in _DOC_KEYS.split(', '))}))",
                (number,),
            )
            first_new = conn.execute("SELECT COALESCE(MAX(doc), 0) FROM docs").fetchone()[0]
            conn.execute(
                f"INSERT INTO docs (realm, entry, {_DOC_KEYS}, text_hash) SELECT ?, n.entry, n.memory_id, n.scope_kind,"
                " n.scope_key, n.status, n.kind, n.trust, n.reviewer_only, n.updated_at_ms, n.author, n.digest"
                " FROM temp.now_docs n"
                " WHERE NOT EXISTS (SELECT 1 FROM docs d WHERE d.realm = ? AND d.entry = n.entry) ORDER BY n.entry",
                (number, number),
            )
            conn.execute(
                "INSERT INTO text (rowid, title, body, tags) SELECT d.doc, r.title, r.body, COALESCE(r.tags, '')"
                " FROM docs d CROSS JOIN realm.records r ON r.rowid = d.entry WHERE d.realm = ? AND d.doc > ?",
                (number, first_new),
            )
            conn.execute("UPDATE realms SET searched = ? WHERE realm = ?", (stored, number))
    finally:
        conn.execute("DROP TABLE IF EXISTS temp.now_docs")


class AllRealmsSearch(FullTextIndex):
    """Search over the small realms' documents: one full-text query for all of them (docs/search.md §1)."""

    HIT_COLUMNS = "d.realm"

    def __init__(self, index: AllRealmsIndex) -> None:
        self.index = index
        self.conn = index.conn

    def scopes(self) -> list[tuple[str, str]]:
        return self.index.scopes()

    def _conditions(self, filters: RecordFilter) -> tuple[str, list]:
        where, args = self.index.conditions(filters)
        return "".join(f" AND {condition}" for condition in where), args

    def _hit(self, window: int, row: tuple) -> Hit:
        score, updated_at_ms, memory_id, realm = row
        return Hit(window, score, updated_at_ms, memory_id, self.index.names[realm])

    def matched_facets(self, match: str, filters: RecordFilter) -> list[tuple]:
        """The matching documents ``filters`` keeps, counted per realm and facet counter key, as
        ``AllRealmsIndex.facet_counters`` gives them; the author kind from each document's entry."""
        conditions, args = self._conditions(filters)
        rows = self.conn.execute(
            "SELECT d.realm, d.scope_kind, d.scope_key, d.status, d.kind, d.trust,"
            f" (SELECT {AUTHOR_KIND} FROM entries r WHERE r.realm = d.realm AND r.memory_id = d.memory_id),"
            " d.reviewer_only, COUNT(*) FROM text CROSS JOIN docs d ON d.doc = text.rowid"
            f" WHERE text MATCH ?{conditions} GROUP BY 1, 2, 3, 4, 5, 6, 7, 8",
            [match, *args],
        )
        return [(self.index.names[realm], *rest) for realm, *rest in rows]


def _realm_number(conn: sqlite3.Connection, name: str) -> int:
    row = conn.execute("SELECT realm FROM realms WHERE name = ?", (name,)).fetchone()
    if row is not None:
        return row[0]
    return conn.execute("INSERT INTO realms (name, signature, listed) VALUES (?, '', 0) RETURNING realm",
                        (name,)).fetchone()[0]


_local = threading.local()


def index_path() -> Path:
    return conf.persistent_state() / "console" / "all-realms.sqlite3"


def _connection() -> sqlite3.Connection:
    """This thread's connection to the index file, created with its schema on first use."""
    path = index_path()
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is not None and getattr(_local, "path", None) == path:
        return conn
    if conn is not None:
        conn.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(f"file:{quote(str(path.absolute()))}", uri=True, isolation_level=None,
                           timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False)
    conn.text_factory = lenient_text
    conn.execute("PRAGMA journal_mode=WAL")
    # Derived from the realms whenever in doubt: a crash loses nothing a copy cannot redo.
    conn.execute("PRAGMA synchronous=NORMAL")
    # A copy touches pages all over the order indexes: enough cache that they stay in memory.
    conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    conn.create_function("text_digest", 3, text_digest, deterministic=True)  # in search's documents
    _ensure_schema(conn)
    _local.conn, _local.path = conn, path
    return conn


def _ensure_schema(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        tables = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
            " ORDER BY sql LIKE 'CREATE VIRTUAL%' DESC"  # a virtual table first: it takes its own tables along
        ).fetchall()
        names = {name for name, in tables}
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() if "meta" in names else None
        if version is None or version[0] != SCHEMA_VERSION:
            for name, in tables:
                conn.execute(f'DROP TABLE IF EXISTS "{name}"')
            for statement in (*_SCHEMA, *_ORDER_INDEXES):
                conn.execute(statement)
            conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
