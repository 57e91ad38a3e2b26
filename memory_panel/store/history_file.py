"""A realm's replayed history, kept in a file of the console's (docs/history.md §3.1).

One SQLite file per realm under ``<persistent_state>/console/history/``. Each record's statuses
are kept as spans: the status a change gave it, from that change's moment (``from_ms``) until its
next change (``to_ms``, None while it stands). "The records at T" are the spans with
``from_ms <= T < to_ms``, in the Records page's keyset order (``from_ms``, ``memory_id``) by the
table's own key; "the changes after A up to B" are the spans that begin in that range. The file
follows the realm's ``audit`` feed from a high-water mark (``audit_id`` only grows,
docs/store-format.md §4.1), like the daily counts (docs/charts.md §2): a small backlog is replayed
by the request, a large one (a realm first seen, a file replaced) in the background while pages
say how far along it is. A file replaced in place is replayed again from the start. It stores
statuses and numbers, never record text.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain

from memory_panel.errors import HistoryUnavailable, RealmIndexing
from memory_panel.store.changes import settled_signature
from memory_panel.store.console_index.builds import BackgroundRuns
from memory_panel.store.console_index.generations import readonly
from memory_panel.store.console_index.progress import BuildProgress
from memory_panel.store.daily_counts import ScopeNumbers, has_column, same_audit_row
from memory_panel.store.history import Change, audit_sql, older_format, op_changes
from memory_panel.store.followed_file import FollowedFile, read_meta, set_meta
from memory_panel.store.realms import realm_path

HISTORY_INDEX = "realm-history"
# A request replays at most ``FollowedFile.inline_rows`` new audit rows itself; a larger backlog is
# replayed in the background, a chunk per transaction, and the pages at a moment wait for it (RealmIndexing).
CHUNK_ROWS = 100_000
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS scopes (scope INTEGER PRIMARY KEY, scope_kind NOT NULL, scope_key NOT NULL,
  UNIQUE (scope_kind, scope_key));
CREATE TABLE IF NOT EXISTS spans (from_ms INTEGER NOT NULL, memory_id TEXT NOT NULL, seq INTEGER NOT NULL,
  to_ms INTEGER, change TEXT NOT NULL, status TEXT NOT NULL, detail TEXT, other_id TEXT, audit_id INTEGER NOT NULL,
  scope INTEGER, kind TEXT, ever_q INTEGER NOT NULL, body_bytes INTEGER NOT NULL,
  PRIMARY KEY (from_ms, memory_id, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS spans_record ON spans (memory_id, seq);
CREATE TABLE IF NOT EXISTS deltas (at_ms INTEGER, scope INTEGER, kind TEXT, status TEXT, ever_q INTEGER, change TEXT,
  records INTEGER NOT NULL, body_bytes INTEGER NOT NULL,
  PRIMARY KEY (at_ms, scope, kind, status, ever_q, change)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS day_deltas (day INTEGER, scope INTEGER, kind TEXT, status TEXT, ever_q INTEGER, change TEXT,
  records INTEGER NOT NULL, body_bytes INTEGER NOT NULL,
  PRIMARY KEY (day, scope, kind, status, ever_q, change)) WITHOUT ROWID;
"""
_TABLES = ("meta", "scopes", "spans", "deltas", "day_deltas")
DAY_MS = 86_400_000
# How many records of a group (scope, kind, status, flag) a moment added (a span begun: its change)
# and removed (a span ended: change ''): the counts at T are the sum of the deltas up to T, read
# a day at a time (day_deltas) up to T's day and by the millisecond (deltas) within it.
_DELTA_SQL = ("INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
              " records = records + excluded.records, body_bytes = body_bytes + excluded.body_bytes")
_SPAN_COLUMNS = "from_ms, memory_id, to_ms, change, status, detail, other_id, scope, kind, ever_q, body_bytes"



@dataclass(frozen=True, slots=True)
class Span:
    """A record's status from ``from_ms`` until ``to_ms`` (None: it stands), with the record's facts
    (scope, kind, the quarantine flag, the body's UTF-8 bytes; ``scope_kind`` None for a record the
    file no longer holds)."""

    from_ms: int
    memory_id: str
    to_ms: int | None
    change: str
    status: str
    status_detail: str | None
    other_id: str | None
    scope_kind: str | None
    scope_key: str | None
    kind: str | None
    ever_quarantined: bool
    body_bytes: int

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
        self.scopes = {number: (kind, key) for number, kind, key in conn.execute("SELECT * FROM scopes")}
        self.mark = read_meta(conn).get("next_seq", "0")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _span(self, row: tuple) -> Span:
        from_ms, memory_id, to_ms, change, status, detail, other_id, scope, kind, ever_q, body_bytes = row
        scope_kind, scope_key = self.scopes.get(scope, (None, None))
        return Span(from_ms, memory_id, to_ms, change, status, detail, other_id, scope_kind, scope_key, kind,
                    bool(ever_q), body_bytes)

    def _scope_numbers(self, scope_kind: str | None, scope_key: str | None) -> list[int] | None:
        if scope_kind is None and scope_key is None:
            return None
        return [n for n, (kind, key) in self.scopes.items()
                if (scope_kind is None or kind == scope_kind) and (scope_key is None or key == scope_key)]

    def standing_at(self, at_ms: int, *, before: tuple[int, str] | None = None, status: str | None = None,
                    kind: str | None = None, scope_kind: str | None = None,
                    scope_key: str | None = None) -> Iterator[Span]:
        """The records as they stood at ``at_ms`` (inclusive), newest change first, after the keyset
        position ``before`` (exclusive): read from the table's key as far as the caller iterates."""
        # One bound on the moment, the tighter: given two, SQLite may range on the looser one.
        if before is not None and before[0] > at_ms:
            before = None
        where, args = ["(to_ms IS NULL OR to_ms > ?)"], [at_ms]
        if before is None:
            where.append("AND from_ms <= ?")
            args.append(at_ms)
        _filters(where, args, status, kind, self._scope_numbers(scope_kind, scope_key))
        return self._keyset(where, args, before, "DESC")

    def _keyset(self, where: list[str], args: list, after: tuple[int, str] | None, order: str) -> Iterator[Span]:
        """The spans matching ``where`` past the keyset position ``after`` in (from_ms, memory_id)
        order ``order``: the rest of ``after``'s moment, then the moments past it, each a range of
        the table's key (a row-value bound would range on the moment alone)."""
        sql = f"SELECT {_SPAN_COLUMNS} FROM spans WHERE {' '.join(where)}"
        ordered = f"ORDER BY from_ms {order}, memory_id {order}, seq {order}"
        if after is None:
            return map(self._span, self.conn.execute(f"{sql} {ordered}", args))
        past = "<" if order == "DESC" else ">"
        same = self.conn.execute(f"{sql} AND from_ms = ? AND memory_id {past} ? {ordered}", [*args, *after])
        rest = self.conn.execute(f"{sql} AND from_ms {past} ? {ordered}", [*args, after[0]])
        return map(self._span, chain(same, rest))

    def groups_at(self, at_ms: int) -> list[Group]:
        """The records standing at ``at_ms``, counted by scope, kind, status and flag."""
        day = at_ms // DAY_MS
        return self._groups(
            "SELECT scope, kind, status, ever_q, NULL, SUM(records), SUM(body_bytes) FROM ("
            " SELECT scope, kind, status, ever_q, records, body_bytes FROM day_deltas WHERE day < ?"
            " UNION ALL SELECT scope, kind, status, ever_q, records, body_bytes FROM deltas"
            " WHERE at_ms >= ? AND at_ms <= ?) GROUP BY 1, 2, 3, 4 HAVING SUM(records) > 0",
            (day, day * DAY_MS, at_ms))

    def changes_between(self, from_ms: int, to_ms: int, *, after: tuple[int, str] | None = None) -> Iterator[Span]:
        """The changes after ``from_ms`` up to ``to_ms`` (inclusive), oldest first, after the keyset
        position ``after`` (exclusive)."""
        if after is not None and after[0] < from_ms:
            after = None
        where, args = ["from_ms <= ?"], [to_ms]
        if after is None:
            where.append("AND from_ms > ?")
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
            "SELECT scope, kind, status, ever_q, change, SUM(records), 0 FROM ("
            + " UNION ALL ".join(parts) + ") WHERE change != '' GROUP BY 1, 2, 3, 4, 5", tuple(args))

    def spans_of(self, memory_ids: list[str]) -> dict[str, list[Span]]:
        """Each record's spans, oldest first."""
        out: dict[str, list[Span]] = {}
        for start in range(0, len(memory_ids), 500):
            ids = memory_ids[start : start + 500]
            marks = ",".join("?" * len(ids))
            for row in self.conn.execute(
                f"SELECT {_SPAN_COLUMNS} FROM spans WHERE memory_id IN ({marks}) ORDER BY memory_id, seq", ids
            ):
                out.setdefault(row[1], []).append(self._span(row))
        return out

    def _groups(self, sql: str, args: tuple) -> list[Group]:
        out = []
        for scope, kind, status, ever_q, change, records, body_bytes in self.conn.execute(sql, args):
            if scope in self.scopes:  # a record the file no longer holds has no facts: never shown
                out.append(Group(*self.scopes[scope], kind, status, bool(ever_q), change, records, body_bytes or 0))
        return out


def _filters(where: list[str], args: list, status: str | None, kind: str | None, scopes: list[int] | None) -> None:
    if status is not None:
        where.append("AND status = ?")
        args.append(status)
    if kind is not None:
        where.append("AND kind = ?")
        args.append(kind)
    if scopes is not None:
        where.append(f"AND scope IN ({','.join('?' * len(scopes))})")
        args += scopes


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
                # docs/history.md §3.1: the history kept is not this file's (replaced, restored): replay it again.
                for table in _TABLES:
                    conn.execute(f"DELETE FROM {table}")
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
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            source.execute("ROLLBACK")
    return True if upto == newest else None


def _replay_chunk(conn: sqlite3.Connection, source: sqlite3.Connection, meta: dict[str, str],
                  after: int, upto: int) -> set[str]:
    """Replay the audit rows after ``after`` up to ``upto`` into spans; the records they touched."""
    scopes = ScopeNumbers(conn)
    seq = int(meta.get("next_seq", 0))
    last_ms = int(meta.get("last_ms", 0))
    records = int(meta.get("records", 0))  # records with a span: every one the realm holds, once current
    pending: dict[str, list] = {}  # this chunk's open span of each record it touched, not inserted yet
    deltas: dict[tuple, list[int]] = {}

    def delta(at_ms: int, group: tuple, change: str, records: int, body_bytes: int) -> None:
        scope, kind, status, ever_q = group
        tally = deltas.setdefault((at_ms, scope or 0, kind or "", status, ever_q, change), [0, 0])
        tally[0] += records
        tally[1] += body_bytes

    rows: list[list] = []
    closes: list[tuple] = []
    sql = audit_sql(has_column(source, "records", "ever_quarantined"))
    for row in source.execute(sql, (after, upto)):
        audit_id, op, memory_id, at_ms, reason, verdict, origin, successor, prior = row[:9]
        # docs/history.md §3: a clock that stepped back is placed at the latest time before it.
        last_ms = at_ms = max(at_ms, last_ms)
        for change in op_changes(audit_id, op, memory_id, at_ms, reason, verdict, origin, successor, prior):
            facts = row[9:14] if change.memory_id == memory_id else row[14:19]
            scope_kind, scope_key, kind, ever_q, body_bytes = facts
            opened = pending.get(change.memory_id)
            if opened is not None:
                opened[3] = at_ms
                delta(at_ms, (opened[9], opened[10], opened[5], opened[11]), "", -1, -opened[12])
            else:
                standing = conn.execute(
                    "SELECT from_ms, seq, scope, kind, status, ever_q, body_bytes FROM spans WHERE memory_id = ?"
                    " ORDER BY seq DESC LIMIT 1", (change.memory_id,)
                ).fetchone()
                if standing is not None:
                    closes.append((at_ms, standing[0], change.memory_id, standing[1]))
                    delta(at_ms, standing[2:6], "", -1, -standing[6])
                else:
                    records += 1
            span = [at_ms, change.memory_id, seq, None, change.kind, change.status, change.status_detail,
                    change.other_id, audit_id, scopes(scope_kind, scope_key) if scope_kind is not None else None,
                    kind, int(bool(ever_q)), body_bytes or 0]
            seq += 1
            delta(at_ms, (span[9], span[10], span[5], span[11]), change.kind, 1, span[12])
            rows.append(span)
            pending[change.memory_id] = span
    conn.executemany("UPDATE spans SET to_ms = ? WHERE from_ms = ? AND memory_id = ? AND seq = ?", closes)
    conn.executemany("INSERT INTO spans VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    days: dict[tuple, list[int]] = {}
    for (at_ms, *group), (count, body_bytes) in deltas.items():
        tally = days.setdefault((at_ms // DAY_MS, *group), [0, 0])
        tally[0] += count
        tally[1] += body_bytes
    conn.executemany(_DELTA_SQL.format(table="deltas"), [(*key, *value) for key, value in deltas.items()])
    conn.executemany(_DELTA_SQL.format(table="day_deltas"), [(*key, *value) for key, value in days.items()])
    token = source.execute("SELECT stage_token FROM audit WHERE audit_id = ?", (upto,)).fetchone()
    set_meta(conn, audit_high_water=upto, audit_token=token[0] if token else "", next_seq=seq, last_ms=last_ms,
              records=records)
    return set(pending)


def _disagreement(conn: sqlite3.Connection, source: sqlite3.Connection, touched: set[str] | None) -> str | None:
    """docs/history.md §3.1: why the replay does not end where the file stands, or None when it does.
    ``touched`` (None: every record) are the records the last replay changed."""
    if touched is None:
        realm_rows = source.execute("SELECT memory_id, status_kind, status_detail FROM records").fetchall()
    else:
        realm_rows = []
        ids = sorted(touched)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            realm_rows += source.execute(
                f"SELECT memory_id, status_kind, status_detail FROM records WHERE memory_id IN ({','.join('?' * len(part))})",
                part).fetchall()
    standing = dict(((memory_id, (status, detail)) for memory_id, status, detail in conn.execute(
        "SELECT memory_id, status, detail FROM spans WHERE to_ms IS NULL")) if touched is None else
        ((memory_id, _standing(conn, memory_id)) for memory_id in touched))
    missing = sum(1 for memory_id, _, _ in realm_rows if standing.get(memory_id) is None)
    if touched is not None:
        held = source.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        missing = max(missing, held - int(read_meta(conn).get("records", 0)))
    if missing:
        return f"{missing} record(s) have no audit row of their write (audit rows missing)"
    differ = [memory_id for memory_id, status, detail in realm_rows
              if (standing[memory_id][0], standing[memory_id][1] if status == "superseded" else None)
              != (status, detail if status == "superseded" else None)]
    if differ:
        return f"{len(differ)} record(s) stand otherwise than their audit rows say (audit rows missing or edited)"
    return None


def _standing(conn: sqlite3.Connection, memory_id: str) -> tuple[str, str | None] | None:
    row = conn.execute("SELECT status, detail FROM spans WHERE memory_id = ? ORDER BY seq DESC LIMIT 1",
                       (memory_id,)).fetchone()
    return (row[0], row[1]) if row else None


# Defined last: it names the chunk above.
HISTORY = FollowedFile("history", _SCHEMA, _catch_up_chunk)
