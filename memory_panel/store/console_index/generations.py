"""Generations: complete index files, replaced whole, one builder at a time (docs/realm-index.md §2).

A generation is ``gen-<n>.sqlite3`` in the family's directory, written as ``.partial`` from one
snapshot of the realm and renamed when complete; older ones are then deleted. A build attaches the
realm file read-only to the new file and copies inside SQLite (docs/realm-index.md §5).
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import time
from pathlib import Path
from collections.abc import Callable, Sequence
from functools import partial
from urllib.parse import quote

from memory_panel.store.changes import SETTLED_NS
from memory_panel.store.console_index.progress import ProgressReport
from memory_panel.store.open_connections import close_index_connections, index_connection
from memory_panel.store.realms import (
    BUSY_TIMEOUT_SECONDS,
    connect_readonly,
    lenient_text,
    readonly_uri,
    realm_path,
)
from memory_panel.store.signals import index_built

logger = logging.getLogger("memory_panel.store.console_index")

# Creates the schema in the new file and copies one snapshot of the realm, reporting how far along
# it is: ``(realm, realm file, new file, progress)``.
Fill = Callable[[str, Path, sqlite3.Connection, ProgressReport], int]
# Rows of the realm one statement of a build copies: each chunk ends with its progress recorded.
COPY_CHUNK_ROWS = 100_000
# Page cache of a build's connection: what the sorts of its index creation work in.
BUILD_CACHE_KIB = 131_072
# The schema name a build attaches the realm file under.
REALM = "realm"

# Per index directory: its signature and the newest generation listed in it then.
_listed_at: dict[str, tuple[tuple, Path | None]] = {}


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


def generation_connection(path: Path) -> sqlite3.Connection:
    """A connection to generation file ``path`` for this thread; a new generation's retires the older ones'.

    Counted with the realm connections (docs/serving.md §5): closed when least recently used and
    opened again on the next use, so hold the path, not the connection, across reads of other realms.
    """
    return index_connection(str(path), partial(_connect_generation, path))


def _connect_generation(path: Path) -> sqlite3.Connection:
    # The generations before this one are retired: whatever connections to them are left go.
    key, directory = str(path), os.path.dirname(path)
    close_index_connections(lambda other: other != key and os.path.dirname(other) == directory)
    # mode=rw: a generation retired since it was named is an error, never a new empty file.
    conn = sqlite3.connect(
        f"file:{quote(str(path.absolute()))}?mode=rw", uri=True, timeout=10, isolation_level=None,
        check_same_thread=False,
    )
    # A build copies the realm's texts as they are (docs/realm-index.md §5), so one a hand edit
    # left undecodable is read back as the direct read shows it, never as an error.
    conn.text_factory = lenient_text
    # The index is rebuilt from the realm whenever in doubt, so a catch-up need not wait for
    # fsync; in WAL, NORMAL still keeps it consistent across a crash.
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


class GenerationReader:
    """Reads one generation of a realm's index, through its connection asked for at each use: a
    page may read more realms' indexes than stay open at once (docs/serving.md §5)."""

    def __init__(self, realm: str, generation: Path) -> None:
        self.realm = realm
        self.generation = generation

    @property
    def conn(self) -> sqlite3.Connection:
        return generation_connection(self.generation)


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


class attached_realm:
    """The realm file attached read-only to a connection, in one transaction.

    docs/realm-index.md §5: a build copies with ``INSERT … SELECT`` from ``realm.<table>``, so
    rows go from file to file inside SQLite (no row is decoded in Python). ``mode=ro`` keeps the
    realm file's bytes untouched (docs/store-format.md §1); everything read between entering and
    leaving the block is one snapshot, and what was written is committed (rolled back on an error).
    ``begin="BEGIN IMMEDIATE"`` takes the write lock first, for a file other writers share.
    """

    def __init__(self, out: sqlite3.Connection, path: Path, *, begin: str = "BEGIN") -> None:
        self.out = out
        out.execute(f"ATTACH DATABASE ? AS {REALM}", (readonly_uri(path),))
        try:
            out.execute(begin)
        except BaseException:
            out.execute(f"DETACH DATABASE {REALM}")
            raise

    def __enter__(self) -> sqlite3.Connection:
        return self.out

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.out.execute("COMMIT" if exc_type is None else "ROLLBACK")
        self.out.execute(f"DETACH DATABASE {REALM}")


def copy_in_chunks(out: sqlite3.Connection, sql: str, progress: ProgressReport, *, first: int, last: int,
                   chunk_rows: int = COPY_CHUNK_ROWS) -> int:
    """Run ``sql`` (an ``INSERT … SELECT`` whose two placeholders bound a key range ``(after, up to]``)
    over the keys ``first``..``last`` a chunk at a time, recording the progress after each.

    One statement per chunk, all in the build's one read transaction: the same snapshot, the same
    rows in the same order as one statement, and the progress file says how far the copy is.
    """
    copied = 0
    total = last - first + 1
    for low in range(first - 1, last, chunk_rows):
        copied += out.execute(sql, (low, low + chunk_rows)).rowcount
        progress.rows(min(low + chunk_rows, last) - first + 1, total)
    return copied


def rowid_range(out: sqlite3.Connection) -> tuple[int, int]:
    """The attached realm's lowest and highest records rowid, from its snapshot (O(1))."""
    low, high = out.execute(f"SELECT MIN(rowid), MAX(rowid) FROM {REALM}.records").fetchone()
    return (low, high) if low is not None else (1, 0)


def write_generation(
    directory: Path,
    realm: str,
    fill: Fill,
    *,
    name: str,
    phases: Sequence[tuple[str, float]],
    schema_version: str,
    wait: bool = False,
) -> Path | None:
    """Write a complete new generation from one snapshot of the realm, then retire older ones.

    When another thread or process holds the build lock (it is building the same realm),
    returns None, or with ``wait`` waits for that build and returns the generation it wrote.
    Meanwhile ``progress.json`` beside the lock says how far along it is (``progress.py``).
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
        progress = ProgressReport(directory, realm, name, phases)
        progress.attach(out)
        outcome = "failed"
        try:
            count = _fill_file(out, path, stat, fill, realm, progress, schema_version)
            os.replace(unfinished, target)
            outcome = "ok"
        finally:
            progress.finish()
            index_built.send_robust(sender=None, family=name, realm=realm, outcome=outcome,
                                    seconds=time.monotonic() - started)
        for older in directory.glob("gen-*.sqlite3*"):
            if not older.name.startswith(target.name):
                older.unlink(missing_ok=True)  # open connections keep reading it until they move on
        logger.info("indexed realm %r into %s: %d records in %.1f s", realm, directory.parent.name, count,
                    time.monotonic() - started)
        return target


def _fill_file(
    out: sqlite3.Connection, path: Path, stat: os.stat_result, fill: Fill, realm: str, progress: ProgressReport,
    schema_version: str,
) -> int:
    """Fill the new file from one snapshot of the realm and close it; the records copied."""
    try:
        # SQLite attaches only a file of the same text encoding: MobKit writes UTF-8, a file
        # made some other way may not be.
        with readonly(path) as source:
            out.execute(f"PRAGMA encoding = '{source.execute('PRAGMA encoding').fetchone()[0]}'")
        out.execute("PRAGMA main.journal_mode=OFF")  # a partial file is thrown away on failure
        out.execute("PRAGMA synchronous=OFF")
        out.execute(f"PRAGMA cache_size=-{BUILD_CACHE_KIB}")  # the indexes are sorted after the load
        count = fill(realm, path, out, progress)
        set_meta(
            out,
            schema_version=schema_version,
            realm_dev=str(stat.st_dev),
            realm_ino=str(stat.st_ino),
            built_at=str(time.time()),
        )
        # docs/realm-failures.md §4: requests read the index while a catch-up writes it; in WAL
        # neither waits for the other (the file records the mode, so it holds after the rename).
        out.execute("PRAGMA main.journal_mode=WAL")
    finally:
        out.close()
    return count
