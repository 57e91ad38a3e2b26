"""An index family: one kind of console index, where it lives, how it is built and caught up."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from memory_panel import conf
from memory_panel.store.changes import settled_signature
from memory_panel.store.console_index.builds import BackgroundRuns
from memory_panel.store.console_index.catch_up import ApplyDelta, catch_up_from_audit
from memory_panel.store.console_index.progress import BuildProgress, queued, read_progress
from memory_panel.store.console_index.generations import (
    Fill,
    generation_connection,
    newest_generation_in,
    write_generation,
)
from memory_panel.store.realms import encode_path_segment, realm_path

logger = logging.getLogger("memory_panel.store.console_index")

# Per generation file: the realm's signature when that generation was last found caught up.
_current_at: dict[str, tuple] = {}



@dataclass(frozen=True)
class FirstStage:
    """docs/realm-index.md §5: a generation published before the complete one, which serves some reads.

    ``wanted(realm)`` says whether the realm is worth building in two stages; ``fill`` builds the
    first generation from the realm (``phases`` its progress), ``complete`` the complete one from a
    copy of it (``complete_phases``). A generation ``fill`` wrote has ``stage`` = ``name`` in its meta.
    """

    name: str
    wanted: Callable[[str], bool]
    fill: Fill
    phases: tuple[tuple[str, float], ...]
    complete: Fill
    complete_phases: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class IndexFamily:
    """One kind of console index: where it lives, how it is built and how it catches up.

    ``fill(realm, realm file, new file)`` creates the schema and copies one snapshot, returning
    the records copied; ``read_delta(realm, source, high_water, touched ids)`` gathers what the
    audit rows past the mark changed, from one snapshot; ``apply_delta(conn, gathered)`` writes it.
    """

    name: str
    schema_version: str
    fill: Fill
    # The build's phases in order, each with its share of a build's time (``progress.py``).
    phases: tuple[tuple[str, float], ...]
    read_delta: Callable[[str, sqlite3.Connection, int, set[str]], Any]
    apply_delta: ApplyDelta
    # A realm's first indexes are built in this order, lowest first (``start_first_builds``).
    cold_start_order: int
    # Built in two stages when the realm wants it (``FirstStage``); None: always in one.
    first_stage: FirstStage | None = None

    def directory(self, realm: str) -> Path:
        return conf.persistent_state() / "console" / self.name / encode_path_segment(realm)

    def newest(self, realm: str) -> Path | None:
        return newest_generation_in(self.directory(realm))

    def caught_up(self, realm: str, path: Path, stat: os.stat_result) -> Path | None:
        """The newest generation, caught up with the realm file; None when only a rebuild can help.

        The generation's path, not a connection: read it through ``generation_connection`` at each
        use, since a connection may be closed for the bound meanwhile (docs/serving.md §5).

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
            return generation  # docs/realm-index.md §4: not written since this generation was last caught up
        if not catch_up_from_audit(path, conn, partial(self.read_delta, realm), self.apply_delta,
                                   family=self.name, realm=realm):
            return None
        if signature is not None:
            _current_at[str(generation)] = signature
        return generation

    def build(self, realm: str, *, wait: bool = False) -> Path | None:
        """Write a complete new generation; another builder already at it means None, or with
        ``wait`` the generation it wrote (see ``write_generation``).

        With a first stage the realm wants, that generation is published first, then completed; a
        first-stage generation already there (a process stopped between the two) is completed. A
        complete generation of this realm file is not replaced by a first stage: it keeps serving
        until the whole new one is ready (docs/realm-index.md §6).
        """
        stage = self.first_stage
        newest = self.newest(realm)
        # The stage of this realm file's generation: None when complete, "none" when there is none.
        at = self.stage_of(newest) if newest is not None and self._of_this_file(newest, realm) else "none"
        if stage is None or at is None or not stage.wanted(realm):
            return self._write(realm, self.fill, self.phases, wait=wait)
        if at != stage.name:
            newest = self._write(realm, stage.fill, stage.phases, wait=wait)
            if newest is None or self.stage_of(newest) != stage.name:
                return newest  # another builder's: it completes its own
        return self._write(realm, stage.complete, stage.complete_phases, wait=wait)

    def _of_this_file(self, generation: Path, realm: str) -> bool:
        """Was ``generation`` written by this version, of the realm file now at the realm's path?"""
        meta = dict(generation_connection(generation).execute("SELECT key, value FROM meta"))
        try:
            stat = realm_path(realm).stat()
        except FileNotFoundError:
            return False
        return meta.get("schema_version") == self.schema_version and (
            (meta.get("realm_dev"), meta.get("realm_ino")) == (str(stat.st_dev), str(stat.st_ino))
        )

    def _write(self, realm: str, fill: Fill, phases: tuple[tuple[str, float], ...], *, wait: bool) -> Path | None:
        return write_generation(
            self.directory(realm), realm, fill, name=self.name, phases=phases,
            schema_version=self.schema_version, wait=wait,
        )

    def stage_of(self, generation: Path) -> str | None:
        """The first stage a generation was published at; None for a complete one."""
        return generation_stage(generation_connection(generation))

    def progress(self, realm: str) -> BuildProgress | None:
        """How far along this process's or another's build of the realm is; None when none runs."""
        return read_progress(self.directory(realm))

    def start_build(self, realm: str) -> None:
        """Build a new generation in the background, unless one is already being built here."""
        _background(self).start(realm)

    def size(self, realm: str) -> int:
        """Bytes of the realm's files of this family on disk (0 when it has none)."""
        directory = self.directory(realm)
        return sum(p.stat().st_size for p in directory.iterdir() if p.is_file()) if directory.is_dir() else 0

    def __post_init__(self) -> None:
        _families.append(self)



def generation_stage(conn: sqlite3.Connection) -> str | None:
    """The ``stage`` a generation's meta names (a first stage's), or None: it is complete."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'stage'").fetchone()
    return row[0] if row else None


def _reconcile_due(built_at: float, path: Path) -> bool:
    """Opted in, the generation is older than the period, and the realm was written since it was built."""
    period = conf.realm_index_reconcile_seconds()
    if period <= 0 or time.time() - built_at <= period:
        return False
    files = [path, path.with_name(path.name + "-wal")]
    return any(f.exists() and f.stat().st_mtime > built_at for f in files)


# Every index family, registered as it is defined (``IndexFamily.__post_init__``).
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
        newest = family.newest(realm)
        if newest is None or family.stage_of(newest) is not None:  # none yet, or one to complete
            try:
                family.build(realm, wait=True)
            except Exception:
                logger.exception("building the %s of realm %r failed; tried again when next asked", family.name, realm)


def build_progress(realm: str) -> BuildProgress | None:
    """The realm's first index build under way in any process, by ``cold_start_order``; None when none runs."""
    for family in sorted(_families, key=lambda family: family.cold_start_order):
        progress = family.progress(realm)
        if progress is not None:
            return progress
    return None


def awaited_progress(family: IndexFamily, realm: str) -> BuildProgress:
    """How far along the build a read of ``family`` waits for is: its own, or the one it comes after."""
    own = family.progress(realm)
    if own is not None:
        return own
    for earlier in sorted(_families, key=lambda family: family.cold_start_order):
        if earlier.cold_start_order < family.cold_start_order and earlier.progress(realm) is not None:
            return queued(realm, family.name, f"waiting for the {earlier.name} build")
    return queued(realm, family.name, "starting")


_builders: dict[str, BackgroundRuns] = {}
_builders_lock = threading.Lock()
_first_builds = BackgroundRuns("building the first indexes", _build_missing)


def _background(family: IndexFamily) -> BackgroundRuns:
    with _builders_lock:
        return _builders.setdefault(family.name, BackgroundRuns(f"building the {family.name}", family.build))

