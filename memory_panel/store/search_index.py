"""A console-owned full-text index of every realm's titles, bodies and tags (docs/search.md).

MobKit's store has no full-text index and the realm file may not be given one, so the console
keeps its own beside the realm index, kept current the same way (memory_panel/store/console_index/):

- one SQLite file per realm and generation under ``<persistent_state>/console/search-index/``,
  holding a *contentless* FTS5 table (the tokens only: the text stays in the realm file, which
  keeps the index a fraction of the realm's size) and, per record, the keys search filters and
  gates on (scope, status, kind, trust, whether only reviewers may read it, updated_at_ms);
- every search first applies the audit rows past the index's high-water mark, so a record the
  runtime writes or supersedes is found by the very next request;
- rebuilt from one snapshot when the realm file was replaced or restored, when the backlog is
  too large to apply inline, or when the realm's schema changed (docs/realm-index.md §5).

Every realm has one, small or not: a small realm builds in a few milliseconds inside the first
search, so there is one search path. A large realm with no index yet is built in the background
and searching it says so, and how far along the build is (``RealmIndexing``), instead of scanning a
million bodies per request.

MobKit writes a record's title, body and tags once; only its status, trust and timestamps move.
A contentless FTS5 table (SQLite 3.40 has no ``contentless_delete``) cannot forget a row's
tokens without the old text, so a hand edit that changes a row's text gives the row a new
document id and leaves the old tokens orphaned — no document row joins them, so they never
match — until the next rebuild drops them.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memory_panel import conf
from memory_panel.errors import RealmIndexing
from memory_panel.store.console_index.catch_up import snapshot_high_water
from memory_panel.store.console_index.family import awaited_progress, IndexFamily, start_first_builds
from memory_panel.store.console_index.generations import (
    attached_realm,
    copy_in_chunks,
    GenerationReader,
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
)
from memory_panel.store.realms import realm_exists, realm_path, store_failed, store_format
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.records import AUTHOR_KIND
from memory_panel.store.request_memo import once_per_request

logger = logging.getLogger("memory_panel.store.search_index")

# docs/search.md §2: unicode61 with diacritics folded, no stemming: a word matches itself only.
TOKENIZER = "unicode61 remove_diacritics 2"
# bm25 column weights: a word in the title counts four times one in the body, a tag twice.
BM25_WEIGHTS = (4.0, 1.0, 2.0)

_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    *NUMBERING_SCHEMA,
    # AUTOINCREMENT: a document id is never reused, so orphaned tokens can never join a new row.
    # ``entry`` is the realm's records.rowid (docs/realm-index.md §3); texts are numbered once.
    "CREATE TABLE docs (doc INTEGER PRIMARY KEY AUTOINCREMENT, entry INTEGER NOT NULL, memory_id TEXT NOT NULL,"
    " scope_kind INTEGER NOT NULL, scope INTEGER NOT NULL, status INTEGER NOT NULL, kind INTEGER NOT NULL,"
    " trust INTEGER NOT NULL, reviewer_only INTEGER NOT NULL, author INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL,"
    " text_hash BLOB NOT NULL)",
    f"CREATE VIRTUAL TABLE text USING fts5(title, body, tags, content='', tokenize='{TOKENIZER}')",
    # docs/realm-index.md §11: the Records facets' counters, one per combination of the keys a
    # facet counts or visibility decides on, moved by every catch-up as ``holdings`` is.
    "CREATE TABLE facet_counts (scope INTEGER NOT NULL, status INTEGER NOT NULL, kind INTEGER NOT NULL,"
    " trust INTEGER NOT NULL, author INTEGER NOT NULL, reviewer_only INTEGER NOT NULL, records INTEGER NOT NULL,"
    " PRIMARY KEY (scope, status, kind, trust, author, reviewer_only)) WITHOUT ROWID",
)
# Created after the load, each in one sorted pass. Counts without a query filter on status first
# (every list has a status or counts them all).
_INDEXES = (
    "CREATE UNIQUE INDEX docs_entry ON docs (entry)",
    "CREATE INDEX docs_status_scope ON docs (status, scope)",
)
_DOC_COLUMNS = "scope_kind, scope, status, kind, trust, reviewer_only, author, updated_at_ms, text_hash"
# The keys of ``docs`` a facet counter is kept by, in ``facet_counts`` order.
_FACET_KEYS = "scope, status, kind, trust, author, reviewer_only"
# A counter row as text: (scope_kind, scope_key, status, kind, trust, author, reviewer_only, records).
_FACET_TEXTS = "l.text, s.scope_key, st.text, k.text, t.text, a.text, f.reviewer_only, f.records"
_FACET_LABELS = (
    "CROSS JOIN scopes s ON s.scope = f.scope CROSS JOIN labels l ON l.label = s.scope_kind"
    " CROSS JOIN labels st ON st.label = f.status CROSS JOIN labels k ON k.label = f.kind"
    " CROSS JOIN labels t ON t.label = f.trust CROSS JOIN labels a ON a.label = f.author"
)


@dataclass(frozen=True)
class Hit:
    """One matching document: its window, bm25 score (lower is better, as FTS5 returns it) and keys.

    docs/search.md §3: results are ordered by window (newest first), then score, then newest. A
    query matching few rows has one window; one matching more than RANK_ALL rows is ranked within
    windows of consecutive document ids, so no page ranks more than about RANK_WINDOW matches.
    """

    window: int
    bm25: float
    updated_at_ms: int
    memory_id: str
    # The document's realm, in an index of several (memory_panel/store/all_realms_index.py).
    realm: str | None = None


# bm25 costs about 4 µs a match (measured at 1M records): rank all matches up to this many...
RANK_ALL = 10_000
# ...and beyond, windows of document ids expected to hold about this many matches each.
RANK_WINDOW = 4_000
DENSITY_SAMPLE = 65_536


class FullTextIndex:
    """Matching, ranking and counting over a ``text`` FTS5 table and its ``docs d`` (docs/search.md §3).

    A realm's search index is one; the console-wide index of the small realms is another. Each
    says how filters read on its ``docs`` (``_conditions``) and how a row becomes a hit (``_hit``).
    """

    conn: sqlite3.Connection
    # Columns of ``docs d`` a hit carries after its score, time and id.
    HIT_COLUMNS = ""

    def _conditions(self, filters: RecordFilter) -> tuple[str, list]:
        raise NotImplementedError

    def _hit(self, window: int, row: tuple) -> Hit:
        return Hit(window, *row)

    def window_shift(self, match: str) -> int | None:
        """log2 of the window size for this query, or None when every match is ranked together."""
        matched = self.conn.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM text WHERE text MATCH ? LIMIT ?)", (match, RANK_ALL + 1)
        ).fetchone()[0]
        if matched <= RANK_ALL:
            return None
        # Estimate the density among the newest DENSITY_SAMPLE documents (counting every match
        # would cost as much as ranking them), then size windows to hold about RANK_WINDOW.
        newest = self.max_doc()
        sample = self.conn.execute(
            "SELECT COUNT(*) FROM text WHERE text MATCH ? AND rowid > ?", (match, newest - DENSITY_SAMPLE)
        ).fetchone()[0]
        window_docs = min(newest, DENSITY_SAMPLE) * RANK_WINDOW // max(sample, 1)
        return max(1, window_docs.bit_length() - 1)

    def max_doc(self) -> int:
        return self.conn.execute("SELECT COALESCE(MAX(doc), 0) FROM docs").fetchone()[0]

    def hits(self, match: str, filters: RecordFilter, after: Hit | None, limit: int, shift: int | None) -> list[Hit]:
        """The next ``limit`` matches: window by window, newest window first; best score first within one."""
        if shift is None:
            return self._window_hits(match, filters, after, limit, 0, None)
        found: list[Hit] = []
        window = after.window if after is not None else self.max_doc() >> shift
        while window >= 0 and len(found) < limit:
            resume = after if after is not None and after.window == window else None
            found += self._window_hits(match, filters, resume, limit - len(found), window, shift)
            window -= 1
        return found

    def _window_hits(
        self, match: str, filters: RecordFilter, after: Hit | None, limit: int, window: int, shift: int | None
    ) -> list[Hit]:
        conditions, args = self._conditions(filters)
        if shift is not None:
            conditions += " AND text.rowid BETWEEN ? AND ?"
            args += [window << shift, ((window + 1) << shift) - 1]
        outer = ""
        outer_args: list = []
        if after is not None:
            outer = " WHERE score > ? OR (score = ? AND (updated_at_ms, memory_id) < (?, ?))"
            outer_args = [after.bm25, after.bm25, after.updated_at_ms, after.memory_id]
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        # CROSS JOIN: the matches drive the join (SQLite would otherwise walk docs by status and
        # probe the full-text index once per document).
        extra = f", {self.HIT_COLUMNS}" if self.HIT_COLUMNS else ""
        sql = (
            f"SELECT * FROM (SELECT bm25(text, {weights}) AS score,"
            f" d.updated_at_ms AS updated_at_ms, d.memory_id AS memory_id{extra}"
            f" FROM text CROSS JOIN docs d ON d.doc = text.rowid WHERE text MATCH ?{conditions})"
            f"{outer} ORDER BY score, updated_at_ms DESC, memory_id DESC LIMIT ?"
        )
        rows = self.conn.execute(sql, [match, *args, *outer_args, limit])
        return [self._hit(window, row) for row in rows]

    def count(self, match: str, filters: RecordFilter, cap: int) -> int:
        """How many documents match, counting no further than ``cap + 1``."""
        conditions, args = self._conditions(filters)
        sql = (
            "SELECT COUNT(*) FROM (SELECT 1 FROM text CROSS JOIN docs d ON d.doc = text.rowid"
            f" WHERE text MATCH ?{conditions} LIMIT ?)"
        )
        return self.conn.execute(sql, [match, *args, cap + 1]).fetchone()[0]

    def count_docs(self, filters: RecordFilter, cap: int) -> int:
        """How many records pass ``filters`` (no query), counting no further than ``cap + 1``."""
        conditions, args = self._conditions(filters)
        sql = f"SELECT COUNT(*) FROM (SELECT 1 FROM docs d WHERE 1{conditions} LIMIT ?)"
        return self.conn.execute(sql, [*args, cap + 1]).fetchone()[0]


class SearchIndex(GenerationReader, FullTextIndex):
    """One ready generation of one realm's search index, caught up when handed out."""

    def scopes(self) -> list[tuple[str, str]]:
        return self.conn.execute(
            "SELECT l.text, s.scope_key FROM scopes s CROSS JOIN labels l ON l.label = s.scope_kind"
        ).fetchall()

    def facet_counters(self) -> list[tuple]:
        """Every facet counter above 0 as text (docs/realm-index.md §11): ``FACET_ROW`` per counter."""
        return self.conn.execute(
            f"SELECT {_FACET_TEXTS} FROM facet_counts f {_FACET_LABELS} WHERE f.records > 0"
        ).fetchall()

    def matched_facets(self, match: str, filters: RecordFilter) -> list[tuple]:
        """The documents matching ``match`` that ``filters`` keeps, counted per counter key (``FACET_ROW``).

        A search has no counter: this reads every match, so the caller bounds it in time.
        """
        conditions, args = self._conditions(filters)
        return self.conn.execute(
            f"SELECT {_FACET_TEXTS} FROM (SELECT {_FACET_KEYS}, COUNT(*) AS records FROM text"
            f" CROSS JOIN docs d ON d.doc = text.rowid WHERE text MATCH ?{conditions} GROUP BY {_FACET_KEYS}) f"
            f" {_FACET_LABELS}",
            [match, *args],
        ).fetchall()

    def _conditions(self, filters: RecordFilter) -> tuple[str, list]:
        """The filters as SQL on ``docs d``, each condition led by AND; texts turned into their numbers."""
        numbered = NumberedFilters(self.conn, "d")
        numbered.records(filters)
        if filters.hide_reviewer_only:
            numbered.where.append("d.reviewer_only = 0")
        numbered.equal("author", filters.author)  # a document keeps its author kind numbered, as its kind
        return "".join(f" AND {condition}" for condition in numbered.where), numbered.args


# ---------------------------------------------------------------------------------------------
# Handing out a ready, caught-up index


def search_index(realm: str) -> SearchIndex | None:
    """The realm's search index caught up with its file; None when the realm has no file.

    Raises ``RealmIndexing`` while a large realm's first index is being built, and ``StoreFailed``
    naming the realm when its file cannot be caught up with (truncated, garbage): search has no
    direct read to fall back on, so the realm is reported here, skipped or refused as every read
    does (docs/realm-failures.md §1).
    """
    return once_per_request(("search_index", realm), lambda: _checked_search_index(realm))


def _checked_search_index(realm: str) -> SearchIndex | None:
    try:
        return _ready_search_index(realm)
    except sqlite3.DatabaseError as error:
        raise store_failed(error, realm=realm) from error


def _ready_search_index(realm: str) -> SearchIndex | None:
    if not realm_exists(realm):
        return None
    path = realm_path(realm)
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    generation = SEARCH_INDEX.caught_up(realm, path, stat)
    if generation is not None:
        return SearchIndex(realm, generation)
    # No index, or one that describes another file or history: small realms rebuild right now.
    if realm_rows(path) < conf.realm_index_min_rows():
        # Concurrent first searches of a small realm wait for the one build rather than fail.
        SEARCH_INDEX.build(realm, wait=True)
    elif SEARCH_INDEX.newest(realm) is None:
        start_first_builds(realm)  # docs/realm-index.md §5: after the realm index, if that is missing too
    else:
        SEARCH_INDEX.start_build(realm)  # tests build inline (MOBKIT_REALM_INDEX_BACKGROUND off)
    generation = SEARCH_INDEX.caught_up(realm, path, stat)
    if generation is None:
        raise RealmIndexing(realm, awaited_progress(SEARCH_INDEX, realm))
    return SearchIndex(realm, generation)


def _read_delta(realm: str, source: sqlite3.Connection, high_water: int, touched: set[str]) -> list[tuple]:
    source.create_function("text_digest", 3, text_digest, deterministic=True)
    rows = _source_rows(source, realm, touched)
    # A supersede's audit row names the new record; its prior's status changed too.
    return rows + _source_rows(source, realm, {row[11] for row in rows if isinstance(row[11], str)} - touched)


def document_columns(realm: str) -> str:
    """What a document is made of, as SQL on the records row ``r``: a catch-up and a build read the same."""
    # Older files have no ever_quarantined column: no row of theirs was ever quarantined then.
    ever = "r.ever_quarantined" if store_format(realm).has_ever_quarantined else "0"
    return (
        # Tags are a JSON array of strings; FTS5 splits on the punctuation, so the raw text indexes
        # each tag's words (a malformed column is indexed as the text it holds).
        "r.memory_id, r.title, r.body, COALESCE(r.tags, '') AS tags, r.scope_kind, r.scope_key, r.status_kind,"
        # docs/store-format.md §5.5: quarantined rows and retired quarantine evidence are reviewer-only.
        f" r.kind, r.trust, (r.status_kind = 'quarantined' OR (r.status_kind = 'tombstoned'"
        f" AND {ever} IS NOT NULL AND {ever} NOT IN (0, '', x''))) AS reviewer_only, r.updated_at_ms, r.supersedes,"
        " r.rowid AS entry,"
        " text_digest(CAST(r.title AS BLOB), CAST(r.body AS BLOB), CAST(COALESCE(r.tags, '') AS BLOB)) AS digest,"
        f" {AUTHOR_KIND} AS author"
    )


def text_digest(*parts: bytes | None) -> bytes:
    """A document's text, hashed as the realm stores it: a catch-up tells a text a hand edit changed."""
    return hashlib.blake2b(b"\0".join(part or b"" for part in parts), digest_size=8).digest()


def _source_rows(source: sqlite3.Connection, realm: str, ids: Iterable[str]) -> list[tuple]:
    ids = list(ids)
    rows: list[tuple] = []
    select = f"SELECT {document_columns(realm)} FROM records r"
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows += source.execute(f"{select} WHERE r.memory_id IN ({', '.join('?' * len(chunk))})", chunk).fetchall()
    return rows


def _doc_values(numbering: Numbering, row: tuple) -> tuple:
    """(entry, memory_id, text, keys) of one ``_columns`` row as the index stores it."""
    memory_id, title, body, tags, scope_kind, scope_key, status, kind, trust, reviewer_only, updated, _, entry, digest, author = (
        row
    )
    kind_label = numbering.label(scope_kind)
    keys = (
        kind_label, numbering.scope(kind_label, scope_key), numbering.label(status), numbering.label(kind),
        numbering.label(trust), reviewer_only, numbering.label(author), updated, digest,
    )
    return entry, memory_id, (title, body, tags), keys


def _apply(conn: sqlite3.Connection, rows: Sequence[tuple]) -> bool:
    numbering = Numbering(conn)
    for row in rows:
        entry, memory_id, text, keys = _doc_values(numbering, row)
        old = conn.execute(
            f"SELECT doc, text_hash, memory_id, {_FACET_KEYS} FROM docs WHERE entry = ?", (entry,)
        ).fetchone()
        if old is not None and old[2] != memory_id:
            return False  # docs/realm-index.md §4: rowids moved; only a rebuild can help
        if old is not None:
            _count_facets(conn, old[3:], -1)
        _count_facets(conn, _facet_key(keys), 1)
        if old is not None and old[1] == keys[-1]:
            conn.execute(
                f"UPDATE docs SET ({_DOC_COLUMNS}) = ({', '.join('?' * len(keys))}) WHERE doc = ?", (*keys, old[0])
            )
            continue
        if old is not None:  # the text changed (a hand edit): the old tokens are orphaned
            conn.execute("DELETE FROM docs WHERE doc = ?", (old[0],))
        _insert(conn, entry, memory_id, text, keys)
    return True


def _facet_key(keys: tuple) -> tuple:
    """A document's ``_DOC_COLUMNS`` values as its ``facet_counts`` key."""
    _, scope, status, kind, trust, reviewer_only, author, *_ = keys
    return scope, status, kind, trust, author, reviewer_only


def _count_facets(conn: sqlite3.Connection, key: Sequence, records: int) -> None:
    conn.execute(
        "INSERT INTO facet_counts VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
        " records = records + excluded.records",
        (*key, records),
    )


def _insert(conn: sqlite3.Connection, entry: int, memory_id: str, text: tuple[str, str, str], keys: tuple) -> None:
    doc = conn.execute(
        f"INSERT INTO docs (entry, memory_id, {_DOC_COLUMNS}) VALUES ({', '.join('?' * (len(keys) + 2))}) RETURNING doc",
        (entry, memory_id, *keys),
    ).fetchone()[0]
    conn.execute("INSERT INTO text (rowid, title, body, tags) VALUES (?, ?, ?, ?)", (doc, *text))


# ---------------------------------------------------------------------------------------------
# Building a generation


# A build's phases and their shares of its time, measured at 1,000,000 records (docs/realm-index.md §5).
_BUILD_PHASES = (
    ("numbering texts", 5), ("copying documents", 33), ("tokenizing text", 42), ("sorting indexes", 8),
    ("merging segments", 12),
)
# The text is tokenized in this many statements at most: each ends FTS5's segment in memory, so
# few and large (the progress between them is coarse; the file stays fresh meanwhile).
_TEXT_CHUNKS = 10


def _fill_generation(realm: str, path: Path, out: sqlite3.Connection, progress: ProgressReport) -> int:
    for statement in _SCHEMA:
        out.execute(statement)
    out.create_function("text_digest", 3, text_digest, deterministic=True)
    _merges(out, LOAD_MERGES)
    with attached_realm(out, path):
        count = _copy_snapshot(realm, out, progress)
    progress.enter("sorting indexes")
    for statement in _INDEXES:
        out.execute(statement)
    progress.enter("merging segments")
    out.execute("INSERT INTO text(text) VALUES ('optimize')")  # one b-tree per column: smallest, fastest
    _merges(out, CATCH_UP_MERGES)
    return count


# FTS5 merges its segments as documents arrive. A build merges them all once at the end
# ('optimize'), so while it loads it merges only when a level holds 64 segments (which bounds
# them at any realm size); measured at 1 M records, tokenizing then costs 3.5 s of CPU, not 5.3 s.
# Catch-ups insert a few rows at a time and get FTS5's defaults back (the file keeps these).
LOAD_MERGES = (("automerge", 0), ("crisismerge", 64))
CATCH_UP_MERGES = (("automerge", 4), ("crisismerge", 16))


def _merges(out: sqlite3.Connection, settings: Sequence[tuple[str, int]]) -> None:
    for name, value in settings:
        out.execute("INSERT INTO text(text, rank) VALUES (?, ?)", (name, value))


def _copy_snapshot(realm: str, out: sqlite3.Connection, progress: ProgressReport) -> int:
    """Documents numbered in the realm's order, then their text, each one ``INSERT … SELECT`` (docs/realm-index.md §5).

    FTS5 tokenizes inside SQLite; Python numbers each distinct text once and hashes each text.
    """
    progress.enter("numbering texts")
    numbering = number_realm_texts(out)
    _number_authors(out, numbering)
    progress.enter("copying documents")
    rows = f"(SELECT {document_columns(realm)} FROM {REALM}.records r) r"
    first, last = rowid_range(out)
    count = copy_in_chunks(
        out,
        f"INSERT INTO docs (entry, memory_id, {_DOC_COLUMNS}) SELECT r.entry, r.memory_id, s.kind_label, s.scope,"
        f" st.label, k.label, t.label, r.reviewer_only, a.label, r.updated_at_ms, r.digest FROM {rows} {NUMBERED_REALM_ROW}"
        " CROSS JOIN temp.label_of a ON a.raw = +r.author WHERE r.entry > ? AND r.entry <= ? ORDER BY r.entry",
        progress, first=first, last=last,
    )
    progress.enter("tokenizing text")
    # Documents are numbered 1.. in entry order (AUTOINCREMENT on an empty table).
    copy_in_chunks(
        out,
        f"INSERT INTO text (rowid, title, body, tags) SELECT d.doc, r.title, r.body, r.tags FROM docs d"
        f" CROSS JOIN {rows} ON r.entry = d.entry WHERE d.doc > ? AND d.doc <= ?",
        progress, first=1, last=count, chunk_rows=max(1, -(-count // _TEXT_CHUNKS)),
    )
    # docs/realm-index.md §11: the facet counters from the documents, one pass in key order.
    out.execute(
        f"INSERT INTO facet_counts SELECT {_FACET_KEYS}, COUNT(*) FROM docs GROUP BY {_FACET_KEYS}"
    )
    set_meta(out, **snapshot_high_water(out))
    return count


def _number_authors(out: sqlite3.Connection, numbering: Numbering) -> None:
    """Number each distinct author kind of the attached realm, as ``number_realm_texts`` the other texts."""
    authors = out.execute(f"SELECT DISTINCT {AUTHOR_KIND} FROM {REALM}.records r").fetchall()
    out.executemany(
        "INSERT OR IGNORE INTO temp.label_of (raw, label) VALUES (?, ?)",
        [(author, numbering.label(author)) for (author,) in authors],
    )


SEARCH_INDEX = IndexFamily(
    name="search-index",
    schema_version="4",
    fill=_fill_generation,
    phases=_BUILD_PHASES,
    read_delta=_read_delta,
    apply_delta=_apply,
    cold_start_order=1,
)
