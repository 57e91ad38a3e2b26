"""Daily counts: what each realm's charts draw, kept per day as audit and injection rows arrive
(docs/charts.md §2).

One SQLite file per realm under ``<persistent_state>/console/daily/``. It follows the realm's two
append-only feeds, ``audit`` (``audit_id`` only grows, docs/store-format.md §4.1) and
``injections`` (``injection_id`` AUTOINCREMENT), from a high-water mark each, so a chart costs the
days and scopes it draws, never the realm's size. Like the realm index it stores numbers, never
record text, and a realm restored or replaced in place is counted again from the start
(docs/realm-index.md §4 step 3).
"""

from __future__ import annotations

import sqlite3
from collections import Counter

from memory_panel.store.changes import settled_signature
from memory_panel.store.console_index.builds import BackgroundRuns
from memory_panel.store.console_index.generations import readonly
from memory_panel.store.followed_file import FollowedFile, read_meta, set_meta
from memory_panel.store.realms import realm_path

DAY_MS = 86_400_000
# A request counts at most ``FollowedFile.inline_rows`` new feed rows itself; a larger backlog (a realm first seen,
# a restore) is counted in the background, a chunk per transaction, while pages draw what is counted.
CHUNK_ROWS = 200_000
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS scopes (scope INTEGER PRIMARY KEY, scope_kind NOT NULL, scope_key NOT NULL,
  UNIQUE (scope_kind, scope_key));
CREATE TABLE IF NOT EXISTS record_days (day INTEGER, scope INTEGER, event TEXT, reviewer_only INTEGER,
  records INTEGER NOT NULL, body_chars INTEGER NOT NULL,
  PRIMARY KEY (day, scope, event, reviewer_only)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS verdict_waits (audit_id INTEGER PRIMARY KEY, day INTEGER NOT NULL,
  scope INTEGER NOT NULL, wait_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS verdict_waits_day ON verdict_waits (day);
CREATE TABLE IF NOT EXISTS injection_days (day INTEGER, surface TEXT, identity TEXT, scope INTEGER,
  injections INTEGER NOT NULL, PRIMARY KEY (day, surface, identity, scope)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_days (day INTEGER, scope INTEGER, event TEXT, records INTEGER NOT NULL,
  PRIMARY KEY (day, scope, event)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dream_op_days (day INTEGER, op_kind TEXT, ops INTEGER NOT NULL,
  PRIMARY KEY (day, op_kind)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dream_run_days (day INTEGER, run_id TEXT, PRIMARY KEY (day, run_id)) WITHOUT ROWID;
"""

# One chunk of the audit feed, grouped inside SQLite: per day, scope and event (created,
# quarantined, superseded, tombstoned, and ``released`` / ``rejected``: the tombstones of
# quarantine verdicts, each also a tombstone). A supersede that was not quarantined also retires
# its prior (docs/store-format.md §4.2): the second arm.
_RECORD_EVENTS = """
WITH feed AS (
  SELECT a.audit_id, a.applied_at_ms, a.op_kind, r.scope_kind, r.scope_key, LENGTH(r.body) AS chars,
         {ever_quarantined} AS ever_q,
         CASE WHEN json_valid(a.detail) THEN json_extract(a.detail, '$.quarantined') END AS quarantined,
         CASE WHEN json_valid(a.detail) THEN json_extract(a.detail, '$.review.verdict') END AS verdict
  FROM audit a JOIN records r ON r.memory_id = a.memory_id
  WHERE a.audit_id > ? AND a.audit_id <= ? AND a.op_kind IN ('create', 'supersede', 'tombstone')
), events AS (
  SELECT applied_at_ms, scope_kind, scope_key, chars,
         CASE WHEN op_kind = 'tombstone' THEN
                CASE verdict WHEN 'release' THEN 'released' WHEN 'tombstone' THEN 'rejected' ELSE 'tombstoned' END
              WHEN quarantined IS NOT NULL THEN 'quarantined' ELSE 'created' END AS event,
         CASE WHEN op_kind = 'tombstone' THEN (ever_q OR verdict IS NOT NULL)
              ELSE quarantined IS NOT NULL END AS reviewer_only
  FROM feed
  UNION ALL
  SELECT applied_at_ms, scope_kind, scope_key, 0, 'superseded', 0 FROM feed
  WHERE op_kind = 'supersede' AND quarantined IS NULL
)
SELECT applied_at_ms / 86400000, scope_kind, scope_key, event, reviewer_only, COUNT(*), COALESCE(SUM(chars), 0)
FROM events GROUP BY 1, 2, 3, 4, 5
"""

# How long each quarantined record waited for its verdict (docs/charts.md §3).
_VERDICT_WAITS = """
SELECT a.audit_id, a.applied_at_ms / 86400000, r.scope_kind, r.scope_key, a.applied_at_ms - r.created_at_ms
FROM audit a JOIN records r ON r.memory_id = a.memory_id
WHERE a.audit_id > ? AND a.audit_id <= ? AND a.op_kind = 'tombstone' AND json_valid(a.detail)
  AND json_extract(a.detail, '$.review.verdict') IN ('release', 'tombstone')
"""

_STEWARD_OPS = """
SELECT applied_at_ms / 86400000, op_kind, json_extract(detail, '$.author.run_id'), COUNT(*)
FROM audit WHERE audit_id > ? AND audit_id <= ? AND json_valid(detail)
  AND json_extract(detail, '$.author.author') = 'steward'
GROUP BY 1, 2, 3
"""

# Each new injection, with its record's scope and how many injections of that record came before
# it (at most 3: the first one and the third, DEAD's threshold, are what the charts count).
_INJECTIONS = """
SELECT i.injection_id, i.at_ms / 86400000, i.surface, i.identity, r.scope_kind, r.scope_key,
       (SELECT COUNT(*) FROM (SELECT 1 FROM injections j WHERE j.record_id = i.record_id
                              AND j.injection_id < i.injection_id LIMIT 3)),
       CASE WHEN r.usage_stats IS NOT NULL AND json_valid(r.usage_stats)
            THEN json_extract(r.usage_stats, '$.judged_useful_count') END
FROM injections i LEFT JOIN records r ON r.memory_id = i.record_id
WHERE i.injection_id > ? ORDER BY i.injection_id LIMIT ?
"""

# docs/panel-tabs.md §3: DEAD = injected at least this many times, never judged useful.
DEAD_INJECTIONS = 3

def counts_connection(realm: str) -> sqlite3.Connection | None:
    """The realm's daily counts, caught up with its feeds (or, for a large backlog, being caught up
    in the background); None when the realm has no file. The caller closes the connection."""
    source = realm_path(realm)
    try:
        signature = settled_signature(source)
    except FileNotFoundError:
        return None
    # A daily file deleted since (always safe, docs/charts.md §2) is counted again.
    if not DAILY_COUNTS.caught_up(realm, signature):
        _background.start(realm)
    return DAILY_COUNTS.connect(realm)


def counting(realm: str) -> bool:
    """Is a background count of this realm's backlog under way in this process?"""
    return _background.is_running(realm)


def _count_backlog(realm: str) -> None:
    DAILY_COUNTS.catch_up(realm)


_background = BackgroundRuns("daily counts", _count_backlog)


def _catch_up_chunk(conn: sqlite3.Connection, realm: str, limit: int | None) -> bool | None:
    """One transaction's worth: True when current, False when over ``limit``, None when more remains."""
    path = realm_path(realm)
    with readonly(path) as source:
        source.execute("BEGIN")  # one snapshot of the realm for this chunk
        conn.execute("BEGIN IMMEDIATE")  # marks read and moved under one write lock: processes serialize
        try:
            meta = read_meta(conn)
            stat = path.stat()
            identity = f"{stat.st_dev}:{stat.st_ino}"
            audit_mark, injection_mark = int(meta.get("audit_high_water", 0)), int(meta.get("injection_high_water", 0))
            if meta.get("schema_version") != SCHEMA_VERSION or meta.get("realm_file") != identity or (
                audit_mark and not same_audit_row(source, audit_mark, meta.get("audit_token", ""))
            ):
                _start_over(conn, identity)
                audit_mark = injection_mark = 0
            newest_audit = source.execute("SELECT COALESCE(MAX(audit_id), 0) FROM audit").fetchone()[0]
            has_injections = _has_table(source, "injections")
            newest_injection = (
                source.execute("SELECT COALESCE(MAX(injection_id), 0) FROM injections").fetchone()[0]
                if has_injections else 0
            )
            if newest_injection < injection_mark:
                _start_over(conn, identity)
                audit_mark = injection_mark = 0
            behind = (newest_audit - audit_mark) + (newest_injection - injection_mark)
            if limit is not None and behind > limit:
                conn.execute("ROLLBACK")
                return False
            if _has_table(source, "dream_runs"):
                # A run sheet is written after its run's batches, without an audit row of its own.
                _count_dream_runs(conn, source, int(meta.get("dream_runs_from", 0)))
            if behind == 0:
                conn.execute("COMMIT")
                return True
            audit_to = min(newest_audit, audit_mark + CHUNK_ROWS)
            if audit_to > audit_mark:
                _count_audit(conn, source, audit_mark, audit_to)
            if newest_injection > injection_mark:
                injection_mark = _count_injections(conn, source, injection_mark)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            source.execute("ROLLBACK")
    return None


def _start_over(conn: sqlite3.Connection, identity: str) -> None:
    """The history counted is not this file's (replaced, restored, another schema): count it again."""
    for table in ("meta", "scopes", "record_days", "verdict_waits", "injection_days", "usage_days",
                  "dream_op_days", "dream_run_days"):
        conn.execute(f"DELETE FROM {table}")
    set_meta(conn, schema_version=SCHEMA_VERSION, realm_file=identity)


def same_audit_row(source: sqlite3.Connection, audit_id: int, token: str) -> bool:
    row = source.execute("SELECT stage_token FROM audit WHERE audit_id = ?", (audit_id,)).fetchone()
    return row is not None and row[0] == token


def _has_table(source: sqlite3.Connection, table: str) -> bool:
    return source.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None


def has_column(source: sqlite3.Connection, table: str, column: str) -> bool:
    return any(row[1] == column for row in source.execute(f"PRAGMA table_info({table})"))


class Numbers:
    """Numbers a derived file gives to values (by default its scopes), each numbered once when first seen."""

    def __init__(self, conn: sqlite3.Connection, table: str = "scopes",
                 columns: tuple[str, ...] = ("scope_kind", "scope_key")) -> None:
        self.conn = conn
        names = ", ".join(columns)
        self.insert = f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(columns))})"
        self.known = {tuple(values): number for number, *values in conn.execute(f"SELECT rowid, {names} FROM {table}")}

    def __call__(self, *values: object) -> int:
        number = self.known.get(values)
        if number is None:
            number = self.conn.execute(self.insert, values).lastrowid
            self.known[values] = number
        return number


def _count_audit(conn: sqlite3.Connection, source: sqlite3.Connection, after: int, upto: int) -> None:
    scopes = Numbers(conn)
    ever_q = "r.ever_quarantined" if has_column(source, "records", "ever_quarantined") else "0"
    rows = source.execute(_RECORD_EVENTS.format(ever_quarantined=ever_q), (after, upto)).fetchall()
    conn.executemany(
        "INSERT INTO record_days VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
        " records = records + excluded.records, body_chars = body_chars + excluded.body_chars",
        [(day, scopes(kind, key), event, int(bool(reviewer_only)), count, chars)
         for day, kind, key, event, reviewer_only, count, chars in rows],
    )
    conn.executemany(
        "INSERT OR IGNORE INTO verdict_waits VALUES (?, ?, ?, ?)",
        [(audit_id, day, scopes(kind, key), max(wait, 0))
         for audit_id, day, kind, key, wait in source.execute(_VERDICT_WAITS, (after, upto))],
    )
    ops: Counter[tuple[int, str]] = Counter()
    runs: set[tuple[int, str]] = set()
    for day, op_kind, run_id, count in source.execute(_STEWARD_OPS, (after, upto)):
        ops[(day, op_kind)] += count
        if run_id is not None:
            runs.add((day, str(run_id)))
    _add_dream_ops(conn, ops)
    conn.executemany("INSERT OR IGNORE INTO dream_run_days VALUES (?, ?)", sorted(runs))
    token = source.execute("SELECT stage_token FROM audit WHERE audit_id = ?", (upto,)).fetchone()
    set_meta(conn, audit_high_water=upto, audit_token=token[0] if token else "")


def _add_dream_ops(conn: sqlite3.Connection, ops: Counter[tuple[int, str]]) -> None:
    conn.executemany(
        "INSERT INTO dream_op_days VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET ops = ops + excluded.ops",
        [(day, kind, count) for (day, kind), count in ops.items()],
    )


def _count_injections(conn: sqlite3.Connection, source: sqlite3.Connection, after: int) -> int:
    scopes = Numbers(conn)
    injections: Counter[tuple[int, str, str, int]] = Counter()
    usage: Counter[tuple[int, int, str]] = Counter()
    mark = after
    for injection_id, day, surface, identity, kind, key, earlier, useful in source.execute(
        _INJECTIONS, (after, CHUNK_ROWS)
    ):
        mark = injection_id
        # A record the realm no longer holds has no scope: it hides nothing (docs/access.md §2.8).
        scope = scopes(kind, key) if kind is not None else 0
        injections[(day, str(surface), str(identity), scope)] += 1
        if scope and earlier == 0:
            usage[(day, scope, "first_injected")] += 1
        if scope and earlier == DEAD_INJECTIONS - 1 and not useful:
            usage[(day, scope, "dead")] += 1
    conn.executemany(
        "INSERT INTO injection_days VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
        " injections = injections + excluded.injections",
        [(*key, count) for key, count in injections.items()],
    )
    conn.executemany(
        "INSERT INTO usage_days VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET records = records + excluded.records",
        [(*key, count) for key, count in usage.items()],
    )
    set_meta(conn, injection_high_water=mark)
    return mark


def _count_dream_runs(conn: sqlite3.Connection, source: sqlite3.Connection, since_ms: int) -> None:
    """Runs by the day they completed. ``dream_runs`` has no growing id, so the runs of the last
    day counted are looked at again (a run sheet is written once its run is over)."""
    rows = source.execute(
        "SELECT completed_at_ms / 86400000, run_id, completed_at_ms FROM dream_runs WHERE completed_at_ms >= ?",
        (since_ms - DAY_MS,),
    ).fetchall()
    conn.executemany("INSERT OR IGNORE INTO dream_run_days VALUES (?, ?)", [(day, str(run)) for day, run, _ in rows])
    newest = max((done for _, _, done in rows if isinstance(done, int)), default=since_ms)
    set_meta(conn, dream_runs_from=newest)


def realm_clock_day(conn: sqlite3.Connection) -> int | None:
    """The realm's newest counted day (docs/panel-tiles.md §1, the realm's clock), or None."""
    row = conn.execute(
        "SELECT MAX(day) FROM (SELECT MAX(day) AS day FROM record_days UNION ALL SELECT MAX(day) FROM injection_days"
        " UNION ALL SELECT MAX(day) FROM dream_run_days UNION ALL SELECT MAX(day) FROM dream_op_days)"
    ).fetchone()
    return row[0]


def scope_names(conn: sqlite3.Connection) -> dict[int, tuple[str, str]]:
    return {number: (kind, key) for number, kind, key in conn.execute("SELECT scope, scope_kind, scope_key FROM scopes")}


# Defined last: it names the chunk above.
DAILY_COUNTS = FollowedFile("daily", _SCHEMA, _catch_up_chunk)
