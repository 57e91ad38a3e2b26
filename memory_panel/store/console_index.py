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
- background builds, one thread per realm and family in a process (docs/realm-index.md §5).
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

from memory_panel import conf
from memory_panel.store.realms import connect_readonly, copy_change_stamp, encode_path_segment, realm_path

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
        return conn if catch_up_from_audit(path, conn, partial(self.read_delta, realm), self.apply_delta) else None

    def build(self, realm: str, *, wait: bool = False) -> Path | None:
        """Write a complete new generation; another builder already at it means None, or with
        ``wait`` the generation it wrote (see ``write_generation``)."""
        return write_generation(self.directory(realm), realm, self, wait=wait)

    def start_build(self, realm: str) -> None:
        """Build a new generation in the background, unless one is already being built here."""
        _background(self).start(realm)

    def __post_init__(self) -> None:
        _families.append(self)


_families: list[IndexFamily] = []


def start_first_builds(realm: str) -> None:
    """docs/realm-index.md §5: a large realm seen for the first time gets every index at once.

    The realm index and the search index are built side by side from cold (each its own thread,
    most of each build spent inside SQLite), so search is ready when the pages are.
    """
    for family in _families:
        if family.newest(realm) is None:
            family.start_build(realm)

    def size(self, realm: str) -> int:
        """Bytes of the realm's files of this family on disk (0 when it has none)."""
        directory = self.directory(realm)
        return sum(p.stat().st_size for p in directory.iterdir() if p.is_file()) if directory.is_dir() else 0


def _reconcile_due(built_at: float, path: Path) -> bool:
    """Opted in, the generation is older than the period, and the realm was written since it was built."""
    period = conf.realm_index_reconcile_seconds()
    if period <= 0 or time.time() - built_at <= period:
        return False
    files = [path, path.with_name(path.name + "-wal")]
    return any(f.exists() and f.stat().st_mtime > built_at for f in files)


def newest_generation_in(directory: Path) -> Path | None:
    """The highest-numbered complete ``gen-<n>.sqlite3`` in ``directory``."""
    if not directory.is_dir():
        return None
    ready = sorted(directory.glob("gen-*.sqlite3"), key=lambda p: int(p.stem.split("-")[1]))
    return ready[-1] if ready else None


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


def _schema_cookie(source: sqlite3.Connection) -> str:
    # SQLite's schema cookie: any table or index created, altered or dropped in the realm moves it.
    return str(source.execute("PRAGMA schema_version").fetchone()[0])


def _same_audit_row(source: sqlite3.Connection, audit_id: int, token: str) -> bool:
    if audit_id == 0:
        return True
    row = source.execute("SELECT stage_token FROM audit WHERE audit_id = ?", (audit_id,)).fetchone()
    return row is not None and row[0] == token


def snapshot_high_water(source: sqlite3.Connection) -> dict[str, str]:
    """The meta a new generation starts from: the newest audit row of the snapshot being copied."""
    newest = source.execute("SELECT audit_id, stage_token FROM audit ORDER BY audit_id DESC LIMIT 1").fetchone()
    audit_id, token = newest or (0, "")
    return {"audit_high_water": str(audit_id), "audit_token": token, "realm_schema": _schema_cookie(source)}


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
        out = sqlite3.connect(unfinished, isolation_level=None)
        try:
            out.execute("PRAGMA journal_mode=OFF")  # a partial file is thrown away on failure
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
            out.execute("PRAGMA journal_mode=WAL")
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
