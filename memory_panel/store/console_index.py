"""What the console's two per-realm indexes share: generations, the build lock, catch-up, fallbacks.

The realm index (``realm_index.py``, docs/realm-index.md) and the search index
(``search_index.py``, docs/search.md) are both SQLite files the console derives from a realm file
it may only read. Each is an ``IndexFamily``: its own directory, schema and ``fill`` (build from one
snapshot) and ``read_delta``/``apply_delta`` (catch up from the audit feed); the rest is here, once:

- generations: ``gen-<n>.sqlite3`` written as ``.partial`` and renamed when complete, older ones
  then deleted, one builder per realm at a time under ``build.lock`` (docs/realm-index.md §2);
- handing out the newest generation only when it describes this file (device, inode, schema
  version) and is caught up with its audit feed (docs/realm-index.md §4); otherwise ``None``, and
  the caller falls back (direct reads, or "being built" for search; docs/realm-index.md §7);
- background builds, one thread per realm and family in a process; a realm's first builds run
  one after another, the realm index first (docs/realm-index.md §5);
- what a build does in SQLite rather than in Python: the realm attached read-only to the new
  file, and its texts numbered once (docs/realm-index.md §5).
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memory_panel import conf
from memory_panel.store.realms import (
    BUSY_TIMEOUT_SECONDS,
    connect_readonly,
    copy_change_stamp,
    encode_path_segment,
    lenient_text,
    readonly_uri,
    realm_path,
)

logger = logging.getLogger("memory_panel.store.console_index")

# Above this many new audit rows a request does not catch up inline; a rebuild does.
MAX_INLINE_DELTA = 5000
# Page cache of a build's connection: what the sorts of its index creation work in.
BUILD_CACHE_KIB = 131_072

ReadDelta = Callable[[sqlite3.Connection, int, set[str]], Any]
# Writes what was gathered; False when it cannot be applied and only a rebuild can help.
ApplyDelta = Callable[[sqlite3.Connection, Any], bool]


@dataclass(frozen=True)
class IndexFamily:
    """One kind of console index: where it lives, how it is built and how it catches up.

    ``fill(realm, realm file, new file)`` creates the schema and copies one snapshot, returning
    the records copied; ``read_delta(realm, source, high_water, touched ids)`` gathers what the
    audit rows past the mark changed, from one snapshot; ``apply_delta(conn, gathered)`` writes it.
    """

    name: str
    schema_version: str
    fill: Callable[[str, Path, sqlite3.Connection], int]
    read_delta: Callable[[str, sqlite3.Connection, int, set[str]], Any]
    apply_delta: ApplyDelta
    # A realm's first indexes are built in this order, lowest first (``start_first_builds``).
    cold_start_order: int

    def directory(self, realm: str) -> Path:
        return conf.persistent_state() / "console" / self.name / encode_path_segment(realm)

    def newest(self, realm: str) -> Path | None:
        return newest_generation_in(self.directory(realm))

    def caught_up(self, realm: str, path: Path, stat: os.stat_result) -> sqlite3.Connection | None:
        """The newest generation, caught up with the realm file; None when only a rebuild can help.

        None when there is no generation, when it was written by another schema version or
        describes another file (replaced: another device or inode), or when the file's history
        is not the one it indexed (restored in place) or the backlog is too large to apply here.
        """
        generation = self.newest(realm)
        if generation is None:
            return None
        conn = generation_connection(generation)
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        if meta.get("schema_version") != self.schema_version:
            return None
        if (meta["realm_dev"], meta["realm_ino"]) != (str(stat.st_dev), str(stat.st_ino)):
            return None
        if _reconcile_due(float(meta["built_at"]), path):
            self.start_build(realm)  # docs/realm-index.md §6; this generation serves meanwhile
        # Taken before the catch-up reads the realm, so a write that lands during it moves the
        # signature and is looked at next time.
        signature = settled_signature(path, stat)
        if signature is not None and _current_at.get(str(generation)) == signature:
            return conn  # docs/realm-index.md §4: not written since this generation was last caught up
        if not catch_up_from_audit(path, conn, partial(self.read_delta, realm), self.apply_delta):
            return None
        if signature is not None:
            _current_at[str(generation)] = signature
        return conn

    def build(self, realm: str, *, wait: bool = False) -> Path | None:
        """Write a complete new generation; another builder already at it means None, or with
        ``wait`` the generation it wrote (see ``write_generation``)."""
        return write_generation(self.directory(realm), realm, self, wait=wait)

    def start_build(self, realm: str) -> None:
        """Build a new generation in the background, unless one is already being built here."""
        _background(self).start(realm)

    def size(self, realm: str) -> int:
        """Bytes of the realm's files of this family on disk (0 when it has none)."""
        directory = self.directory(realm)
        return sum(p.stat().st_size for p in directory.iterdir() if p.is_file()) if directory.is_dir() else 0

    def __post_init__(self) -> None:
        _families.append(self)


_families: list[IndexFamily] = []


def start_first_builds(realm: str) -> None:
    """docs/realm-index.md §5: a large realm seen for the first time gets every missing index.

    One thread builds them one after another, by ``cold_start_order`` (the realm index, then
    search): on a machine of few cores, two builds side by side would each take about as long as
    both in turn, and deep pages would wait for search. A build another thread or process already
    runs is waited for, not repeated; one that fails does not keep the next from being built.
    """
    _first_builds.start(realm)


def first_builds_running(realm: str) -> bool:
    """Whether this process is building the realm's first indexes in the background right now."""
    return _first_builds.is_running(realm)


def _build_missing(realm: str) -> None:
    for family in sorted(_families, key=lambda family: family.cold_start_order):
        if family.newest(realm) is None:
            try:
                family.build(realm, wait=True)
            except Exception:
                logger.exception("building the %s of realm %r failed; tried again when next asked", family.name, realm)


def _reconcile_due(built_at: float, path: Path) -> bool:
    """Opted in, the generation is older than the period, and the realm was written since it was built."""
    period = conf.realm_index_reconcile_seconds()
    if period <= 0 or time.time() - built_at <= period:
        return False
    files = [path, path.with_name(path.name + "-wal")]
    return any(f.exists() and f.stat().st_mtime > built_at for f in files)


# docs/realm-index.md §4: a file's modification time comes from a coarse clock (a tick of a few
# milliseconds), so a write in the same tick as a look can leave size and time as the look saw them.
# Only a signature whose newest time is older than this is trusted to mean "unchanged since".
SETTLED_NS = 1_000_000_000

# Per generation file: the realm's signature when that generation was last found caught up.
_current_at: dict[str, tuple] = {}
# Per index directory: its signature and the newest generation listed in it then.
_listed_at: dict[str, tuple[tuple, Path | None]] = {}


def settled_signature(path: Path, stat: os.stat_result) -> tuple | None:
    """What every commit to the realm file moves (its and its ``-wal``'s size and time), or None
    while the newest of those times is too recent to be trusted (``SETTLED_NS``).

    Every commit writes the ``-wal`` (or, without WAL, the file itself), and a checkpoint writes
    the file; a replaced file has another inode. So while the signature stands, the realm holds
    what it held when the signature was taken.
    """
    try:
        wal = os.stat(f"{path}-wal")
        wal_part = (wal.st_size, wal.st_mtime_ns)
    except FileNotFoundError:
        wal_part = (None, 0)
    if time.time_ns() - max(stat.st_mtime_ns, wal_part[1]) < SETTLED_NS:
        return None
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, *wal_part)


def newest_generation_in(directory: Path) -> Path | None:
    """The highest-numbered complete ``gen-<n>.sqlite3`` in ``directory``.

    A generation appears and goes by a rename or an unlink, which moves the directory's time, so a
    directory settled since it was last listed is not listed again.
    """
    try:
        stat = directory.stat()
    except FileNotFoundError:
        return None
    signature = (stat.st_ino, stat.st_mtime_ns) if time.time_ns() - stat.st_mtime_ns >= SETTLED_NS else None
    listed = _listed_at.get(str(directory))
    if signature is not None and listed is not None and listed[0] == signature:
        return listed[1]
    if not directory.is_dir():
        return None
    ready = sorted(directory.glob("gen-*.sqlite3"), key=lambda p: int(p.stem.split("-")[1]))
    newest = ready[-1] if ready else None
    if signature is not None:
        _listed_at[str(directory)] = (signature, newest)
    return newest


_local = threading.local()


def generation_connection(path: Path) -> sqlite3.Connection:
    """One connection per thread and generation file; a new generation gets a new connection."""
    cache: dict[str, sqlite3.Connection] = _local.__dict__.setdefault("connections", {})
    key = str(path)
    conn = cache.get(key)
    if conn is None:
        for stale in [k for k in cache if Path(k).parent == path.parent]:
            cache.pop(stale).close()
        conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        # A build copies the realm's texts as they are (docs/realm-index.md §5), so one a hand edit
        # left undecodable is read back as the direct read shows it, never as an error.
        conn.text_factory = lenient_text
        # The index is rebuilt from the realm whenever in doubt, so a catch-up need not wait for
        # fsync; in WAL, NORMAL still keeps it consistent across a crash.
        conn.execute("PRAGMA synchronous=NORMAL")
        cache[key] = conn
    return conn


class readonly:
    """A read-only connection to a realm file, closed on leaving the block."""

    def __init__(self, path: Path) -> None:
        self.conn = connect_readonly(path)

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def realm_rows(path: Path) -> int:
    # MAX(rowid) is O(1) and never below the row count of a table MobKit never deletes from.
    with readonly(path) as realm:
        return realm.execute("SELECT COALESCE(MAX(rowid), 0) FROM records").fetchone()[0]


def set_meta(conn: sqlite3.Connection, **values: str) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())


def catch_up_from_audit(
    path: Path, conn: sqlite3.Connection, read: ReadDelta, apply: ApplyDelta, *, also: Collection[str] = ()
) -> bool:
    """Apply the audit rows past the high-water mark; False when only a rebuild can help.

    ``read(source, high_water, touched ids)`` gathers what the index needs from one snapshot of
    the realm; ``apply(conn, gathered)`` writes it (docs/realm-index.md §4). ``also`` names records
    to re-read though no audit row names them (usage counters, docs/realm-index.md §6).
    """
    high_water, token, realm_schema = _high_water(conn)
    with readonly(path) as source:
        source.execute("BEGIN")  # one snapshot of the realm for the whole catch-up
        try:
            newest = source.execute("SELECT COALESCE(MAX(audit_id), 0) FROM audit").fetchone()[0]
            if _schema_cookie(source) != realm_schema:
                return False  # docs/realm-index.md §5: a migration may rewrite keys without audit rows
            if newest < high_water or not _same_audit_row(source, high_water, token):
                return False  # restored or replaced in place: the history we indexed is gone
            if newest == high_water and not also:
                return True
            delta = source.execute(
                "SELECT audit_id, stage_token, memory_id FROM audit WHERE audit_id > ?"
                " ORDER BY audit_id LIMIT ?",
                (high_water, MAX_INLINE_DELTA + 1),
            ).fetchall()
            if len(delta) > MAX_INLINE_DELTA:
                return False
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
                return False
            set_meta(conn, audit_high_water=str(last_id), audit_token=last_token)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True


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


# The schema name a build attaches the realm file under.
REALM = "realm"


class attached_realm:
    """The realm file attached read-only to a build's connection, in one read transaction.

    docs/realm-index.md §5: a build copies with ``INSERT … SELECT`` from ``realm.<table>``, so
    rows go from file to file inside SQLite (no row is decoded in Python). ``mode=ro`` keeps the
    realm file's bytes untouched (docs/store-format.md §1); everything read between entering and
    leaving the block is one snapshot, and what was written to the new file is committed.
    """

    def __init__(self, out: sqlite3.Connection, path: Path) -> None:
        self.out = out
        out.execute(f"ATTACH DATABASE ? AS {REALM}", (readonly_uri(path),))
        out.execute("BEGIN")

    def __enter__(self) -> sqlite3.Connection:
        return self.out

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.out.execute("COMMIT" if exc_type is None else "ROLLBACK")
        self.out.execute(f"DETACH DATABASE {REALM}")


# ---------------------------------------------------------------------------------------------
# Numbered texts: what both indexes store once per value, not once per record (docs/realm-index.md §3)

# Columns holding a realm's own values have no declared type, so a value a hand edit left as a
# number or a BLOB is kept as it is, as the direct read sees it.
NUMBERING_SCHEMA = (
    "CREATE TABLE labels (label INTEGER PRIMARY KEY, text NOT NULL UNIQUE)",
    "CREATE TABLE scopes (scope INTEGER PRIMARY KEY, scope_kind INTEGER NOT NULL, scope_key NOT NULL,"
    " UNIQUE (scope_kind, scope_key))",
)
# An index row's scope as text: joins ``scopes s`` and ``labels l`` to the alias' ``scope`` column.
SCOPE_TEXT = "CROSS JOIN scopes s ON s.scope = {alias}.scope CROSS JOIN labels l ON l.label = s.scope_kind"


class Numbering:
    """Numbers each text and scope once, reading and extending the index's own tables."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.labels = {_text_key(text): label for label, text in conn.execute("SELECT label, text FROM labels")}
        self.scopes = {
            (kind, _text_key(key)): scope for scope, kind, key in conn.execute("SELECT scope, scope_kind, scope_key FROM scopes")
        }

    def label(self, text: Any) -> int:
        key = _text_key(text)
        label = self.labels.get(key)
        if label is None:
            label = self.labels[key] = len(self.labels) + 1
            self.conn.execute("INSERT INTO labels VALUES (?, ?)", (label, text))
        return label

    def scope(self, kind: int, key: Any) -> int:
        wanted = (kind, _text_key(key))
        scope = self.scopes.get(wanted)
        if scope is None:
            scope = self.scopes[wanted] = len(self.scopes) + 1
            self.conn.execute("INSERT INTO scopes VALUES (?, ?, ?)", (scope, kind, key))
        return scope


# docs/realm-index.md §5: a build numbers each distinct text of the attached realm once, here, then
# copies every row inside SQLite, joined to these maps from the realm's own values to their numbers.
# The maps live in the build connection's temp schema, never in the generation.
_NUMBER_MAPS = (
    "CREATE TEMP TABLE label_of (raw UNIQUE, label INTEGER)",
    "CREATE TEMP TABLE scope_of (kind_raw, key_raw, kind_label INTEGER, scope INTEGER, UNIQUE (kind_raw, key_raw))",
    # Answered from the store's (scope_kind, scope_key, status_kind) index, without reading rows.
    f"INSERT INTO temp.scope_of (kind_raw, key_raw) SELECT DISTINCT scope_kind, scope_key FROM {REALM}.records",
    f"CREATE TEMP TABLE row_labels AS SELECT DISTINCT status_kind, kind, trust FROM {REALM}.records",
    "INSERT OR IGNORE INTO temp.label_of (raw) SELECT kind_raw FROM temp.scope_of UNION ALL"
    " SELECT status_kind FROM temp.row_labels UNION ALL SELECT kind FROM temp.row_labels"
    " UNION ALL SELECT trust FROM temp.row_labels",
)
# Joins the attached realm's row ``r`` to its numbers: ``s.kind_label``, ``s.scope``, ``st.label``
# (status), ``k.label`` (kind) and ``t.label`` (trust). Unary + drops the realm column's TEXT
# affinity, so a value matches only a value of its own type, as ``Numbering`` tells them apart.
NUMBERED_REALM_ROW = (
    "CROSS JOIN temp.scope_of s ON s.kind_raw = +r.scope_kind AND s.key_raw = +r.scope_key"
    " CROSS JOIN temp.label_of st ON st.raw = +r.status_kind"
    " CROSS JOIN temp.label_of k ON k.raw = +r.kind CROSS JOIN temp.label_of t ON t.raw = +r.trust"
)


def number_realm_texts(out: sqlite3.Connection) -> Numbering:
    """Number every distinct text of the attached realm, and fill the maps ``NUMBERED_REALM_ROW`` joins.

    Python sees each distinct value once (as the direct read decodes it), not once per row.
    """
    for statement in _NUMBER_MAPS:
        out.execute(statement)
    numbering = Numbering(out)
    labels = out.execute("SELECT rowid, raw FROM temp.label_of").fetchall()
    numbered_labels = [(numbering.label(raw), n) for n, raw in labels]
    out.executemany("UPDATE temp.label_of SET label = ? WHERE rowid = ?", numbered_labels)
    scopes = out.execute("SELECT rowid, kind_raw, key_raw FROM temp.scope_of").fetchall()
    numbered = []
    for n, kind, key in scopes:
        label = numbering.label(kind)
        numbered.append((label, numbering.scope(label, key), n))
    out.executemany("UPDATE temp.scope_of SET kind_label = ?, scope = ? WHERE rowid = ?", numbered)
    return numbering


def _text_key(value: Any) -> tuple[str, Any]:
    # 5 and '5' are different values in a column with no type; Python's dict would not tell 1 and 1.0 apart.
    return (type(value).__name__, value)


class NumberedFilters:
    """Equality filters on texts, as conditions on the numbers an index stores for them."""

    def __init__(self, conn: sqlite3.Connection, alias: str) -> None:
        self.conn = conn
        self.alias = alias
        self.where: list[str] = []
        self.args: list = []

    def labels(self, texts: Iterable[Any]) -> list[int]:
        texts = list(texts)
        if not texts:
            return []
        rows = self.conn.execute(f"SELECT label FROM labels WHERE text IN ({', '.join('?' * len(texts))})", texts)
        return [row[0] for row in rows]

    def records(
        self,
        *,
        scope_kind: str | None,
        scope_key: str | None,
        status_kind: str | None,
        kind: str | None,
        trust: str | None,
        hidden_scope_kinds: Sequence[str],
    ) -> None:
        """The records filters both indexes offer: equality on each, never the hidden scope kinds."""
        if scope_key is not None:
            self.scopes_in([(scope_kind, scope_key)])
        elif scope_kind is not None:
            self._equal_any("scope_kind", self.labels([scope_kind]))
        self.equal("status", status_kind)
        self.equal("kind", kind)
        self.equal("trust", trust)
        self.exclude("scope_kind", hidden_scope_kinds)

    def scopes_in(self, scopes: Iterable[tuple[str | None, str]]) -> None:
        """Only these (kind, key) scopes; a kind of None matches the key in any kind."""
        scopes = list(scopes)
        pairs = [(kind, key) for kind, key in scopes if kind is not None]
        numbers: list[int] = []
        for start in range(0, len(pairs), 400):
            chunk = pairs[start : start + 400]
            numbers += [row[0] for row in self.conn.execute(
                "SELECT s.scope FROM scopes s JOIN labels l ON l.label = s.scope_kind"
                f" WHERE (l.text, s.scope_key) IN (VALUES {', '.join(['(?, ?)'] * len(chunk))})",
                [part for pair in chunk for part in pair],
            )]
        for key in [key for kind, key in scopes if kind is None]:
            numbers += [row[0] for row in self.conn.execute("SELECT scope FROM scopes WHERE scope_key = ?", (key,))]
        self._equal_any("scope", numbers)

    def equal(self, column: str, value: str | None) -> None:
        if value is not None:
            self._equal_any(column, self.labels([value]))

    def exclude(self, column: str, values: Iterable[str]) -> None:
        numbers = self.labels(values)
        if numbers:
            self.where.append(f"{self.alias}.{column} NOT IN ({', '.join('?' * len(numbers))})")
            self.args += numbers

    def _equal_any(self, column: str, numbers: list[int]) -> None:
        if not numbers:
            self.where.append("0")  # a text the index never saw: nothing matches
        elif len(numbers) == 1:
            self.where.append(f"{self.alias}.{column} = ?")
            self.args.append(numbers[0])
        else:
            self.where.append(f"{self.alias}.{column} IN ({', '.join('?' * len(numbers))})")
            self.args += numbers


# ---------------------------------------------------------------------------------------------
# Building a generation


def write_generation(directory: Path, realm: str, family: IndexFamily, *, wait: bool = False) -> Path | None:
    """Write a complete new generation from one snapshot of the realm, then retire older ones.

    When another thread or process holds the build lock (it is building the same realm),
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
        unfinished = target.with_suffix(".partial")
        unfinished.unlink(missing_ok=True)
        # A URI connection, so the realm can be attached read-only by its URI (docs/realm-index.md §5).
        out = sqlite3.connect(
            f"file:{quote(str(unfinished.absolute()))}", uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_SECONDS
        )
        # Texts a hand edit left undecodable are read as the direct read shows them (numbering, facts).
        out.text_factory = lenient_text
        try:
            # SQLite attaches only a file of the same text encoding: MobKit writes UTF-8, a file
            # made some other way may not be.
            with readonly(path) as source:
                out.execute(f"PRAGMA encoding = '{source.execute('PRAGMA encoding').fetchone()[0]}'")
            out.execute("PRAGMA main.journal_mode=OFF")  # a partial file is thrown away on failure
            out.execute("PRAGMA synchronous=OFF")
            out.execute(f"PRAGMA cache_size=-{BUILD_CACHE_KIB}")  # the indexes are sorted after the load
            count = family.fill(realm, path, out)
            set_meta(
                out,
                schema_version=family.schema_version,
                realm_dev=str(stat.st_dev),
                realm_ino=str(stat.st_ino),
                built_at=str(time.time()),
            )
            # docs/realm-failures.md §4: requests read the index while a catch-up writes it; in WAL
            # neither waits for the other (the file records the mode, so it holds after the rename).
            out.execute("PRAGMA main.journal_mode=WAL")
        finally:
            out.close()
        os.replace(unfinished, target)
        for older in directory.glob("gen-*.sqlite3*"):
            if not older.name.startswith(target.name):
                older.unlink(missing_ok=True)  # open connections keep reading it until they move on
        logger.info("indexed realm %r into %s: %d records in %.1f s", realm, family.name, count,
                    time.monotonic() - started)
        return target


class BackgroundRuns:
    """Runs ``run(realm)`` in a background thread, one per realm at a time in this process.

    With ``again_if_asked``, a start while the realm's run is under way runs it once more after,
    so what prompted the start is not left to the run that began before it.
    """

    def __init__(self, label: str, run: Callable[[str], object], *, again_if_asked: bool = False) -> None:
        self.label = label
        self.run = run
        self.again_if_asked = again_if_asked
        self.running: set[str] = set()
        self.asked_again: set[str] = set()
        self.lock = threading.Lock()

    def start(self, realm: str) -> None:
        if not conf.realm_index_background():
            self.run(realm)
            return
        with self.lock:
            if realm in self.running:
                if self.again_if_asked:
                    self.asked_again.add(realm)
                return
            self.running.add(realm)
        threading.Thread(target=self._run, args=(realm,), name=f"{self.label}:{realm}", daemon=True).start()

    def is_running(self, realm: str) -> bool:
        with self.lock:
            return realm in self.running

    def _run(self, realm: str) -> None:
        while True:
            try:
                self.run(realm)
            except Exception:
                logger.exception("%s of realm %r failed; pages read the realm directly meanwhile", self.label, realm)
            with self.lock:
                if realm not in self.asked_again:
                    self.running.discard(realm)
                    return
                self.asked_again.discard(realm)


_builders: dict[str, BackgroundRuns] = {}
_builders_lock = threading.Lock()
_first_builds = BackgroundRuns("building the first indexes", _build_missing)


def _background(family: IndexFamily) -> BackgroundRuns:
    with _builders_lock:
        return _builders.setdefault(family.name, BackgroundRuns(f"building the {family.name}", family.build))


@dataclass(frozen=True)
class _Look:
    conn: sqlite3.Connection | None  # None for a replica copy: never pinned (docs/replicas.md §4)
    inode: int
    data_version: object
    at: float


class ChangeWatch:
    """Whether a realm file was written since the last look, looking at most once a period.

    One pinned read-only connection per realm file: SQLite moves its ``PRAGMA data_version``
    whenever another connection commits, so an unchanged realm costs one pragma per period.
    The first look in a process counts as a change (the index may be older than the process).
    A replica copy is not held open (its follower would wait for the connection): its follower's
    ``-txid`` file says when it last applied a transaction.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.looks: dict[str, _Look] = {}

    def changed(self, path: Path, stat: os.stat_result, period: float) -> bool:
        now = time.monotonic()
        with self.lock:
            look = self.looks.get(str(path))
            if look is not None and look.inode != stat.st_ino:
                if look.conn is not None:
                    look.conn.close()
                look = None
            if look is not None and now - look.at < period:
                return False
            stamp = copy_change_stamp(path)
            if stamp is not None:
                conn, version = None, stamp
            else:
                conn = look.conn if look is not None else connect_readonly(path)
                version = conn.execute("PRAGMA data_version").fetchone()[0]
            self.looks[str(path)] = _Look(conn, stat.st_ino, version, now)
            return look is None or version != look.data_version
