"""A realm's replayed history, kept in a file of the console's (docs/history.md §3.1).

One SQLite file per realm under ``<persistent_state>/console/history/``. Each record's statuses
are kept as spans: the status a change gave it, from that change's moment (``from_ms``) until its
next change (``to_ms``, None while it stands), keyed by (``from_ms``, the record's rowid in the
realm, the change's number at that moment). "The records at T" are the spans with
``from_ms <= T < to_ms``, newest first by the table's own key; "the changes after A up to B" are
the spans that begin in that range. Record ids are read from the realm file, attached read-only,
for the rows a page reads. The file follows the realm's ``audit`` feed from a high-water mark
(``audit_id`` only grows, docs/store-format.md §4.1), like the daily counts (docs/charts.md §2): a
small backlog is replayed by the request, a large one (a realm first seen, a file replaced) in the
background while pages say how far along it is. A file replaced in place is replayed again from the
start. It stores statuses and numbers, never record text.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from itertools import chain

from memory_panel.errors import HistoryUnavailable, RealmIndexing
from memory_panel.store.changes import settled_signature
from memory_panel.store.console_index.builds import BackgroundRuns
from memory_panel.store.console_index.generations import readonly
from memory_panel.store.console_index.progress import BuildProgress
from memory_panel.store.daily_counts import Numbers, has_column, same_audit_row
from memory_panel.store.history import (
    ADDED,
    QUARANTINED,
    RELEASED,
    SUPERSEDED,
    TOMBSTONED,
    Change,
    audit_sql,
    older_format,
    op_changes,
)
from memory_panel.store.followed_file import FollowedFile, read_meta, set_meta
from memory_panel.store.realms import lenient_text, readonly_uri, realm_path

HISTORY_INDEX = "realm-history"
# A request replays at most ``FollowedFile.inline_rows`` new audit rows itself; a larger backlog is
# replayed in the background, a chunk per transaction, and the pages at a moment wait for it (RealmIndexing).
CHUNK_ROWS = 100_000
SCHEMA_VERSION = "2"

# docs/history.md §3.1: a change is kept as a small number; the status it gives follows from it.
CHANGE_CODES = {ADDED: 0, SUPERSEDED: 1, TOMBSTONED: 2, QUARANTINED: 3, RELEASED: 4}
CHANGE_OF = {code: change for change, code in CHANGE_CODES.items()}
STATUS_OF = {0: "active", 1: "superseded", 2: "tombstoned", 3: "quarantined", 4: "tombstoned"}

# Spans are keyed by the realm's own rowid of the record (MobKit never deletes from ``records``,
# docs/realm-index.md §3), its memory_id read from the realm for the rows a page shows; scope and
# kind are numbers. ``n`` numbers a record's changes at one moment (a batch may change it twice).
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE scopes (scope INTEGER PRIMARY KEY, scope_kind NOT NULL, scope_key NOT NULL,
  UNIQUE (scope_kind, scope_key));
CREATE TABLE kinds (kind INTEGER PRIMARY KEY, name NOT NULL UNIQUE);
CREATE TABLE spans (from_ms INTEGER NOT NULL, record INTEGER NOT NULL, n INTEGER NOT NULL, to_ms INTEGER,
  change INTEGER NOT NULL, reason, other INTEGER, scope INTEGER NOT NULL, kind INTEGER NOT NULL,
  ever_q INTEGER NOT NULL, PRIMARY KEY (from_ms, record, n)) WITHOUT ROWID;
CREATE INDEX spans_record ON spans (record);
CREATE TABLE deltas (at_ms INTEGER, scope INTEGER, kind INTEGER, change INTEGER, ended INTEGER, ever_q INTEGER,
  records INTEGER NOT NULL, body_bytes INTEGER NOT NULL,
  PRIMARY KEY (at_ms, scope, kind, change, ended, ever_q)) WITHOUT ROWID;
CREATE TABLE day_deltas (day INTEGER, scope INTEGER, kind INTEGER, change INTEGER, ended INTEGER, ever_q INTEGER,
  records INTEGER NOT NULL, body_bytes INTEGER NOT NULL,
  PRIMARY KEY (day, scope, kind, change, ended, ever_q)) WITHOUT ROWID
"""
DAY_MS = 86_400_000
# How many records of a group (scope, kind, change, flag) a moment added (a span begun, ``ended`` 0)
# and removed (a span ended: ``ended`` 1, negative counts): the counts at T are the sum of the deltas
# up to T, read a day at a time (day_deltas) up to T's day and by the millisecond (deltas) within it.
_DELTA_SQL = ("INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
              " records = records + excluded.records, body_bytes = body_bytes + excluded.body_bytes")
_SPAN_SQL = ("SELECT s.from_ms, s.record, s.n, r.memory_id, s.to_ms, s.change, s.reason, o.memory_id, s.scope, s.kind,"
             " s.ever_q FROM spans s CROSS JOIN realm.records r ON r.rowid = s.record"
             " LEFT JOIN realm.records o ON o.rowid = s.other")
# The realm's rows as the replay must end: each record's status, and its successor's rowid when superseded.
_REALM_STANDING = ("SELECT r.rowid, r.status_kind, CASE WHEN r.status_kind = 'superseded' THEN"
                   " (SELECT s.rowid FROM records s WHERE s.memory_id = r.status_detail) END FROM records r")
SpanKey = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Span:
    """A record's status from ``from_ms`` until ``to_ms`` (None: it stands), with the record's facts
    (scope, kind, the quarantine flag). ``(from_ms, record, n)`` is its key in the file: the
    record's rowid in the realm, and the change's number among the record's changes at that moment."""

    from_ms: int
    record: int
    n: int
    memory_id: str
    to_ms: int | None
    change: str
    status: str
    status_detail: str | None
    other_id: str | None
    scope_kind: str
    scope_key: str
    kind: str
    ever_quarantined: bool

    def as_change(self) -> Change:
        return Change(self.from_ms, 0, self.memory_id, self.change, self.status, self.status_detail, self.other_id)


@dataclass(frozen=True, slots=True)
class Group:
    """How many records (and body bytes) share a scope, kind, status and quarantine flag."""

    scope_kind: str
    scope_key: str
    kind: str
    status: str
    ever_quarantined: bool
    change: str | None
    records: int
    body_bytes: int


class History:
    """A realm's kept history, current with its file; read with the methods below, then ``close``."""

    def __init__(self, realm: str, conn: sqlite3.Connection) -> None:
        self.realm = realm
        self.conn = conn
        self._attached = False
        self._numbers()

    def _numbers(self) -> None:
        self.scopes = {number: (kind, key) for number, kind, key in self.conn.execute("SELECT * FROM scopes")}
        self.kinds = dict(self.conn.execute("SELECT kind, name FROM kinds").fetchall())

    def _facts(self, scope: int, kind: int) -> tuple[str, str, str]:
        """A scope and kind by their numbers; numbered since this history was opened (a catch-up
        in another process between two reads), they are read again."""
        if scope not in self.scopes or kind not in self.kinds:
            self._numbers()
        return (*self.scopes[scope], self.kinds[kind])

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _spans(self, sql: str, args: list) -> sqlite3.Cursor:
        """Spans read with their records' ids, from the realm file attached read-only when first
        needed (the counts need no realm). Never detached: a page may leave a read unfinished, which
        DETACH refuses; closing the connection lets the realm go."""
        if not self._attached:
            self.conn.execute("ATTACH DATABASE ? AS realm", (readonly_uri(realm_path(self.realm)),))
            self._attached = True
        return self.conn.execute(sql, args)

    def _span(self, row: tuple) -> Span:
        from_ms, record, n, memory_id, to_ms, code, reason, other_id, scope, kind, ever_q = row
        detail = reason if code == CHANGE_CODES[QUARANTINED] else other_id if code == CHANGE_CODES[SUPERSEDED] else None
        return Span(from_ms, record, n, memory_id, to_ms, CHANGE_OF[code], STATUS_OF[code], detail, other_id,
                    *self._facts(scope, kind), bool(ever_q))

    def _scope_numbers(self, scope_kind: str | None, scope_key: str | None) -> list[int] | None:
        if scope_kind is None and scope_key is None:
            return None
        return [n for n, (kind, key) in self.scopes.items()
                if (scope_kind is None or kind == scope_kind) and (scope_key is None or key == scope_key)]

    def standing_at(self, at_ms: int, *, before: SpanKey | None = None, status: str | None = None,
                    kind: str | None = None, scope_kind: str | None = None,
                    scope_key: str | None = None) -> Iterator[Span]:
        """The records as they stood at ``at_ms`` (inclusive), newest change first, after the keyset
        position ``before`` (exclusive): read from the table's key as far as the caller iterates."""
        # One bound on the moment, the tighter: given two, SQLite may range on the looser one.
        if before is not None and before[0] > at_ms:
            before = None
        where, args = ["(s.to_ms IS NULL OR s.to_ms > ?)"], [at_ms]
        if before is None:
            where.append("AND s.from_ms <= ?")
            args.append(at_ms)
        if status is not None:
            _within(where, args, "s.change", [code for code, name in STATUS_OF.items() if name == status])
        if kind is not None:
            _within(where, args, "s.kind", [number for number, name in self.kinds.items() if name == kind])
        scopes = self._scope_numbers(scope_kind, scope_key)
        if scopes is not None:
            _within(where, args, "s.scope", scopes)
        return self._keyset(where, args, before, "DESC")

    def _keyset(self, where: list[str], args: list, after: SpanKey | None, order: str) -> Iterator[Span]:
        """The spans matching ``where`` past the keyset position ``after`` in key order ``order``:
        the rest of ``after``'s record at its moment, the rest of the moment, then the moments past
        it, each a range of the table's key (a row-value bound would range on the moment alone)."""
        sql = f"{_SPAN_SQL} WHERE {' '.join(where)}"
        ordered = f"ORDER BY s.from_ms {order}, s.record {order}, s.n {order}"
        if after is None:
            return map(self._span, self._spans(f"{sql} {ordered}", args))
        past = "<" if order == "DESC" else ">"
        at_ms, record, n = after
        parts = (
            self._spans(f"{sql} AND s.from_ms = ? AND s.record = ? AND s.n {past} ? {ordered}",
                        [*args, at_ms, record, n]),
            self._spans(f"{sql} AND s.from_ms = ? AND s.record {past} ? {ordered}", [*args, at_ms, record]),
            self._spans(f"{sql} AND s.from_ms {past} ? {ordered}", [*args, at_ms]),
        )
        return map(self._span, chain(*parts))

    def groups_at(self, at_ms: int) -> list[Group]:
        """The records standing at ``at_ms``, counted by scope, kind, status and flag."""
        day = at_ms // DAY_MS
        return self._groups(
            "SELECT scope, kind, change, ever_q, SUM(records), SUM(body_bytes) FROM ("
            " SELECT scope, kind, change, ever_q, records, body_bytes FROM day_deltas WHERE day < ?"
            " UNION ALL SELECT scope, kind, change, ever_q, records, body_bytes FROM deltas"
            " WHERE at_ms >= ? AND at_ms <= ?) GROUP BY 1, 2, 3, 4",
            (day, day * DAY_MS, at_ms), counting_changes=False)

    def changes_between(self, from_ms: int, to_ms: int, *, after: SpanKey | None = None) -> Iterator[Span]:
        """The changes after ``from_ms`` up to ``to_ms`` (inclusive), oldest first, after the keyset
        position ``after`` (exclusive)."""
        if after is not None and after[0] < from_ms:
            after = None
        where, args = ["s.from_ms <= ?"], [to_ms]
        if after is None:
            where.append("AND s.from_ms > ?")
            args.append(from_ms)
        return self._keyset(where, args, after, "ASC")

    def change_groups(self, from_ms: int, to_ms: int) -> list[Group]:
        """The changes after ``from_ms`` up to ``to_ms``, counted by scope, kind, status, flag and change."""
        first, last = from_ms // DAY_MS, to_ms // DAY_MS
        if first == last:
            parts, args = ["SELECT * FROM deltas WHERE at_ms > ? AND at_ms <= ?"], [from_ms, to_ms]
        else:
            parts = ["SELECT * FROM deltas WHERE at_ms > ? AND at_ms < ?",
                     "SELECT * FROM day_deltas WHERE day > ? AND day < ?",
                     "SELECT * FROM deltas WHERE at_ms >= ? AND at_ms <= ?"]
            args = [from_ms, (first + 1) * DAY_MS, first, last, last * DAY_MS, to_ms]
        return self._groups(
            "SELECT scope, kind, change, ever_q, SUM(records), 0 FROM ("
            + " UNION ALL ".join(parts) + ") WHERE ended = 0 GROUP BY 1, 2, 3, 4", tuple(args), counting_changes=True)

    def spans_of(self, memory_ids: list[str]) -> dict[str, list[Span]]:
        """Each record's spans, oldest first."""
        out: dict[str, list[Span]] = {}
        for start in range(0, len(memory_ids), 500):
            ids = memory_ids[start : start + 500]
            marks = ",".join("?" * len(ids))
            for row in self._spans(
                f"{_SPAN_SQL} WHERE s.record IN (SELECT rowid FROM realm.records WHERE memory_id IN ({marks}))"
                " ORDER BY s.record, s.from_ms, s.n", ids
            ):
                span = self._span(row)
                out.setdefault(span.memory_id, []).append(span)
        return out

    def _groups(self, sql: str, args: tuple, *, counting_changes: bool) -> list[Group]:
        """Groups by status (two changes leave a record tombstoned), or by change too when counting changes."""
        tally: dict[tuple, list[int]] = {}
        for scope, kind, code, ever_q, records, body_bytes in self.conn.execute(sql, args):
            key = (scope, kind, STATUS_OF[code], bool(ever_q), CHANGE_OF[code] if counting_changes else None)
            counts = tally.setdefault(key, [0, 0])
            counts[0] += records
            counts[1] += body_bytes or 0
        return [Group(*self._facts(scope, kind), status, ever_q, change, records, body_bytes)
                for (scope, kind, status, ever_q, change), (records, body_bytes) in tally.items() if records > 0]


def _within(where: list[str], args: list, column: str, values: list[int]) -> None:
    where.append(f"AND {column} IN ({','.join('?' * len(values))})")
    args += values


def realm_history(realm: str) -> History:
    """The realm's history, caught up with its file. Raises ``HistoryUnavailable`` (the audit rows do
    not tell it) and ``RealmIndexing`` (a large backlog being replayed in the background)."""
    refused = older_format(realm)
    if refused is not None:
        raise refused
    if _background.is_running(realm):  # its chunks hold the file's write lock: no catch-up waits on them
        raise RealmIndexing(realm, replay_progress(realm))
    signature = settled_signature(realm_path(realm))
    if not HISTORY.caught_up(realm, signature):
        _background.start(realm)
        if not HISTORY.catch_up(realm, limit=0):  # the background run may have finished already (tests run it inline)
            raise RealmIndexing(realm, replay_progress(realm))
    conn = HISTORY.connect(realm)
    problem = read_meta(conn).get("problem")
    if problem:
        conn.close()
        raise HistoryUnavailable(realm, problem)
    conn.text_factory = lenient_text  # memory_ids are read from the realm, whose text may be hand-edited
    return History(realm, conn)


_started: dict[str, float] = {}


def replay_progress(realm: str) -> BuildProgress:
    """How far along the replay is: audit rows replayed of the realm's."""
    with readonly(realm_path(realm)) as source:
        newest = source.execute("SELECT COALESCE(MAX(audit_id), 0) FROM audit").fetchone()[0]
    conn = HISTORY.connect(realm)
    try:
        done = int(read_meta(conn).get("audit_high_water", 0))
    finally:
        conn.close()
    started = _started.setdefault(realm, time.time())
    return BuildProgress(realm, HISTORY_INDEX, "replaying the audit rows", done, newest,
                         done / newest if newest else 0.0, started, time.time())


def _replay_backlog(realm: str) -> None:
    _started[realm] = time.time()
    try:
        HISTORY.catch_up(realm)
    finally:
        _started.pop(realm, None)


_background = BackgroundRuns("history replay", _replay_backlog)


def _catch_up_chunk(conn: sqlite3.Connection, realm: str, limit: int | None) -> bool | None:
    """One transaction's worth: True when current, False when over ``limit``, None when more remains."""
    path = realm_path(realm)
    with readonly(path) as source:
        source.execute("BEGIN")  # one snapshot of the realm for this chunk
        conn.execute("BEGIN IMMEDIATE")  # the mark read and moved under one write lock: processes serialize
        try:
            meta = read_meta(conn)
            stat = path.stat()
            identity = f"{stat.st_dev}:{stat.st_ino}"
            mark = int(meta.get("audit_high_water", 0))
            newest = source.execute("SELECT COALESCE(MAX(audit_id), 0) FROM audit").fetchone()[0]
            if meta.get("schema_version") != SCHEMA_VERSION or meta.get("realm_file") != identity or newest < mark or (
                mark and not same_audit_row(source, mark, meta.get("audit_token", ""))
            ):
                # docs/history.md §3.1: the history kept is not this file's (replaced, restored) or
                # was kept by another version of the console: replay it again.
                _start_again(conn)
                set_meta(conn, schema_version=SCHEMA_VERSION, realm_file=identity)
                meta, mark = {}, 0
            behind = newest - mark
            if limit is not None and behind > limit:
                conn.execute("ROLLBACK")
                return False
            if behind == 0:
                conn.execute("COMMIT")
                return True
            upto = min(newest, mark + CHUNK_ROWS)
            touched = _replay_chunk(conn, source, meta, mark, upto)
            if upto == newest and "problem" not in meta:
                problem = _disagreement(conn, source, None if mark == 0 else touched)
                if problem:
                    set_meta(conn, problem=problem)
            pack = upto == newest and "packed" not in meta
            if pack:
                set_meta(conn, packed=1)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            source.execute("ROLLBACK")
    if pack:
        # A replay from nothing, written a chunk at a time, leaves about an eighth of its pages
        # empty: packed once (half a second at a million records), its WAL given back. Another
        # writer holding the file past the busy timeout leaves it as written, only less packed.
        with suppress(sqlite3.OperationalError):
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return True if upto == newest else None


def _start_again(conn: sqlite3.Connection) -> None:
    """Every table dropped and made again, in the open transaction: a file of an older schema
    holds tables of other columns."""
    tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'").fetchall()
    for (table,) in tables:
        conn.execute(f'DROP TABLE "{table}"')
    for statement in _SCHEMA.split(";"):
        conn.execute(statement)


def _replay_chunk(conn: sqlite3.Connection, source: sqlite3.Connection, meta: dict[str, str],
                  after: int, upto: int) -> set[int]:
    """Replay the audit rows after ``after`` up to ``upto`` into spans; the records (rowids) they touched."""
    scopes, kinds = Numbers(conn), Numbers(conn, "kinds", ("name",))
    last_ms = int(meta.get("last_ms", 0))
    records = int(meta.get("records", 0))  # records with a span: every one the realm holds, once current
    # The highest rowid with a span: a record past it has none, so its first change looks nothing up.
    top = int(meta.get("top_record", 0))
    pending: dict[int, list] = {}  # this chunk's open span of each record it touched, not inserted yet
    deltas: dict[tuple, list[int]] = {}

    def delta(at_ms: int, span: list, ended: int, body_bytes: int) -> None:
        tally = deltas.setdefault((at_ms, span[7], span[8], span[4], ended, span[9]), [0, 0])
        tally[0] += -1 if ended else 1
        tally[1] += -body_bytes if ended else body_bytes

    rows: list[list] = []
    closes: list[tuple] = []
    sql = audit_sql(has_column(source, "records", "ever_quarantined"))
    for row in source.execute(sql, (after, upto)):
        audit_id, op, memory_id, at_ms, reason, verdict, origin, successor, prior = row[:9]
        rowids = {memory_id: row[19], prior: row[20]}  # the row's record and the prior it supersedes
        # docs/history.md §3: a clock that stepped back is placed at the latest time before it.
        last_ms = at_ms = max(at_ms, last_ms)
        for change in op_changes(audit_id, op, memory_id, at_ms, reason, verdict, origin, successor, prior):
            own = change.memory_id == memory_id
            scope_kind, scope_key, kind, ever_q, body_bytes = row[9:14] if own else row[14:19]
            record = row[19] if own else row[20]
            if record is None:  # a record the file does not hold: nothing of it could be shown
                continue
            opened = pending.get(record)
            if opened is None and record <= top:
                stored = conn.execute(
                    "SELECT from_ms, record, n, NULL, change, NULL, NULL, scope, kind, ever_q FROM spans"
                    " WHERE record = ? ORDER BY from_ms DESC, n DESC LIMIT 1", (record,)).fetchone()
                if stored is not None:
                    opened = list(stored)
                    closes.append((at_ms, *stored[:3]))
            if opened is not None:
                opened[3] = at_ms
                delta(at_ms, opened, 1, body_bytes or 0)
            else:
                records += 1
            top = max(top, record)
            span = [at_ms, record, opened[2] + 1 if opened is not None and opened[0] == at_ms else 0, None,
                    CHANGE_CODES[change.kind], change.status_detail if change.kind == QUARANTINED else None,
                    _rowid(source, rowids, change.other_id), scopes(scope_kind, scope_key), kinds(kind),
                    int(bool(ever_q))]
            delta(at_ms, span, 0, body_bytes or 0)
            rows.append(span)
            pending[record] = span
    conn.executemany("UPDATE spans SET to_ms = ? WHERE from_ms = ? AND record = ? AND n = ?", closes)
    conn.executemany("INSERT INTO spans VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    days: dict[tuple, list[int]] = {}
    for (at_ms, *group), (count, body_bytes) in deltas.items():
        tally = days.setdefault((at_ms // DAY_MS, *group), [0, 0])
        tally[0] += count
        tally[1] += body_bytes
    conn.executemany(_DELTA_SQL.format(table="deltas"), [(*key, *value) for key, value in deltas.items()])
    conn.executemany(_DELTA_SQL.format(table="day_deltas"), [(*key, *value) for key, value in days.items()])
    token = source.execute("SELECT stage_token FROM audit WHERE audit_id = ?", (upto,)).fetchone()
    set_meta(conn, audit_high_water=upto, audit_token=token[0] if token else "", last_ms=last_ms, records=records,
             top_record=top)
    return set(pending)


def _rowid(source: sqlite3.Connection, known: dict[str | None, int | None], memory_id: str | None) -> int | None:
    """The rowid of the other record a change names: the row's own or its prior, else (a release's
    successor) looked up."""
    if memory_id is None:
        return None
    if memory_id in known:
        return known[memory_id]
    found = source.execute("SELECT rowid FROM records WHERE memory_id = ?", (memory_id,)).fetchone()
    return found[0] if found else None


def _disagreement(conn: sqlite3.Connection, source: sqlite3.Connection, touched: set[int] | None) -> str | None:
    """docs/history.md §3.1: why the replay does not end where the file stands, or None when it does.
    ``touched`` (None: every record) are the records (rowids) the last replay changed."""
    standing_sql = "SELECT record, change, other FROM spans WHERE to_ms IS NULL"
    if touched is None:
        realm_rows = source.execute(_REALM_STANDING).fetchall()
        standing_rows = conn.execute(standing_sql).fetchall()
    else:
        realm_rows, standing_rows = [], []
        ids = sorted(touched)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            realm_rows += source.execute(f"{_REALM_STANDING} WHERE r.rowid IN ({marks})", part).fetchall()
            standing_rows += conn.execute(f"{standing_sql} AND record IN ({marks})", part).fetchall()
    standing = {record: (STATUS_OF[code], other) for record, code, other in standing_rows}
    missing = sum(1 for record, _, _ in realm_rows if record not in standing)
    if touched is not None:
        held = source.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        missing = max(missing, held - int(read_meta(conn).get("records", 0)))
    if missing:
        return f"{missing} record(s) have no audit row of their write (audit rows missing)"
    differ = [record for record, status, successor in realm_rows
              if (standing[record][0], standing[record][1] if status == "superseded" else None) != (status, successor)]
    if differ:
        return f"{len(differ)} record(s) stand otherwise than their audit rows say (audit rows missing or edited)"
    return None


# Defined last: it names the chunk above.
HISTORY = FollowedFile("history", _SCHEMA, _catch_up_chunk)
