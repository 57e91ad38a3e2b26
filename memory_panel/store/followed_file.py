"""Files the console derives from a realm and follows its feeds with: the daily counts behind the
charts (docs/charts.md §2) and the replayed history behind the pages at a moment (docs/history.md §3).

Each is one SQLite file per realm under ``<MOBKIT_PERSISTENT_STATE>/console/<family>/``, made whole
before it appears under its name, caught up a chunk per transaction from high-water marks kept in
its ``meta`` table, and counted again from the realm whenever in doubt (so deleting one is safe).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from memory_panel import conf
from memory_panel.store.realms import encode_path_segment

# A backlog up to this many feed rows is caught up by the request that finds it; past it, in the background.
INLINE_ROWS = 20_000

_creating = threading.Lock()

# One transaction's worth of catching up: True when current, False when more than ``limit`` rows
# are behind (nothing done), None when more remains.
Chunk = Callable[[sqlite3.Connection, str, "int | None"], "bool | None"]


class FollowedFile:
    def __init__(self, family: str, schema: str, chunk: Chunk, *, inline_rows: int = INLINE_ROWS) -> None:
        self.family, self.schema, self.chunk, self.inline_rows = family, schema, chunk, inline_rows
        # Per realm: the realm file's signature when this file was last found current in this process.
        self._current_at: dict[str, tuple] = {}

    def directory(self) -> Path:
        return conf.persistent_state() / "console" / self.family

    def path(self, realm: str) -> Path:
        return self.directory() / f"{encode_path_segment(realm)}.sqlite3"

    def size(self, realm: str) -> int:
        """Bytes the realm's file takes (the file and its -wal)."""
        path = self.path(realm)
        return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())

    def connect(self, realm: str) -> sqlite3.Connection:
        path = self.path(realm)
        if not path.exists():
            self._create(path)
        conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        # Counted again from the realm whenever in doubt, so a write need not wait for fsync.
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def catch_up(self, realm: str, *, limit: int | None = None) -> bool:
        """Follow the feeds past the marks, a chunk per transaction; False when more than ``limit``
        rows are behind (nothing is done then: a background run does it)."""
        conn = self.connect(realm)
        try:
            while True:
                done = self.chunk(conn, realm, limit)
                if done is not None:
                    return done
                limit = None  # the first chunk was within the limit: the rest is done too
        finally:
            conn.close()

    def caught_up(self, realm: str, signature: tuple | None) -> bool:
        """Catch up inline unless the realm file (``signature``, None while unsettled) stood still
        since the last time; False when the backlog is over ``inline_rows`` and was left alone."""
        if signature is not None and self._current_at.get(realm) == signature and self.path(realm).exists():
            return True
        if not self.catch_up(realm, limit=self.inline_rows):
            return False
        if signature is not None:
            self._current_at[realm] = signature
        return True

    def _create(self, path: Path) -> None:
        """A new file, complete (schema, WAL) before it appears under its name: a connection that
        finds it half made, or switching journal modes under another, would fail as "locked"."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with _creating, open(f"{path}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one process makes it; the others find it made
            if path.exists():
                return
            making = Path(f"{path}.partial")
            making.unlink(missing_ok=True)
            conn = sqlite3.connect(making, isolation_level=None)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(self.schema)
            finally:
                conn.close()
            os.replace(making, path)


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def set_meta(conn: sqlite3.Connection, **values: object) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                     [(key, str(value)) for key, value in values.items()])
