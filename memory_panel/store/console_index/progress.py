"""How far along a generation build is, readable by every process (docs/realm-index.md §5).

A build writes ``progress.json`` beside ``build.lock`` in its family's directory: the phase, the
rows copied of the realm's rows, and the fraction of the whole build done (phases weighted by
what they cost, measured at 1 M records). It is rewritten at most once a second: after each
chunk of the copy or index created and, inside a long statement, from SQLite's progress handler
at most once a second. It is removed when the build ends; a file whose builder process is gone is ignored.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger("memory_panel.store.console_index")

PROGRESS_FILE = "progress.json"
# At most this often SQLite's progress handler rewrites the file.
WRITE_EVERY_SECONDS = 1.0
# SQLite calls the progress handler every this many virtual-machine steps (a row copied is ~100):
# often enough for a heartbeat each second, rarely enough to cost nothing measurable.
HANDLER_STEPS = 100_000
# Before this much of the build is done, an estimate of the time left would be noise.
ESTIMATE_AFTER = 0.02


@dataclass(frozen=True)
class BuildProgress:
    """One build's progress as its builder last recorded it."""

    realm: str
    index: str  # the family: "realm-index" or "search-index"
    phase: str
    rows_done: int
    rows_total: int
    fraction: float  # of the whole build, phases weighted
    started_at: float  # wall-clock seconds
    updated_at: float

    def eta_seconds(self, now: float | None = None) -> int | None:
        """About how long is left, from the pace so far; None before there is a pace to go by."""
        if self.fraction < ESTIMATE_AFTER:
            return None
        now = time.time() if now is None else now
        left = (self.updated_at - self.started_at) * (1 - self.fraction) / self.fraction - (now - self.updated_at)
        return max(1, round(left))

    @property
    def percent(self) -> int:
        return int(self.fraction * 100)

    def time_left(self) -> str:
        eta = self.eta_seconds()
        return "time left not known yet" if eta is None else f"about {_duration(eta)} left"

    def rows_copied(self) -> str:
        return f"{self.rows_done:,} of {self.rows_total:,} rows copied" if self.rows_total else ""

    def summary(self) -> str:
        """One phrase for a page or an error message: "copying records, 42% done, about 3 min left"."""
        return f"{self.phase}, {self.percent}% done, {self.time_left()}"

    def as_data(self) -> dict[str, Any]:
        """The JSON-RPC error's ``data`` (docs/wire-contract.md §1.5)."""
        return {
            "realm": self.realm,
            "index": self.index,
            "phase": self.phase,
            "rows_done": self.rows_done,
            "rows_total": self.rows_total,
            "percent": self.percent,
            "elapsed_seconds": round(max(0.0, time.time() - self.started_at)),
            "eta_seconds": self.eta_seconds(),
        }


def _duration(seconds: int) -> str:
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def queued(realm: str, index: str, phase: str) -> BuildProgress:
    """A build not under way yet (another index of the realm is built first, or it is starting)."""
    now = time.time()
    return BuildProgress(realm, index, phase, 0, 0, 0.0, now, now)


def read_progress(directory: Path) -> BuildProgress | None:
    """The progress a live builder recorded in ``directory``; None when no build is recording one."""
    try:
        raw = json.loads((directory / PROGRESS_FILE).read_text())
        pid = int(raw.pop("pid"))
        progress = BuildProgress(**raw)
    except (FileNotFoundError, ValueError, TypeError, KeyError):
        return None
    return progress if _alive(pid) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False  # a builder that died mid-way; the next build rewrites the file
    except PermissionError:
        return True
    return True


class ProgressReport:
    """The builder's side: records each phase and row count, rewriting the file at most once a second.

    ``phases`` are (name, weight) in build order; the weights are each phase's share of a build's
    time, so the fraction done (and the estimate of time left) moves at an even pace.
    """

    def __init__(self, directory: Path, realm: str, index: str, phases: Sequence[tuple[str, float]]) -> None:
        self.path = directory / PROGRESS_FILE
        self.realm = realm
        self.index = index
        total = sum(weight for _, weight in phases)
        self.starts: dict[str, float] = {}
        self.weights: dict[str, float] = {}
        done = 0.0
        for name, weight in phases:
            self.starts[name] = done / total
            self.weights[name] = weight / total
            done += weight
        self.started_at = time.time()
        self.phase = "starting"
        self.rows_done = 0
        self.rows_total = 0
        self.within = 0.0
        self.written_at = 0.0

    def attach(self, conn: sqlite3.Connection) -> None:
        """Keep the file fresh inside long statements too (the handler must not touch ``conn``)."""
        conn.set_progress_handler(self._tick, HANDLER_STEPS)

    def enter(self, phase: str) -> None:
        self.phase = phase
        self.within = 0.0
        self._write()

    def rows(self, done: int, total: int) -> None:
        """Rows of the realm copied so far in this phase, of ``total``."""
        self.rows_done, self.rows_total = done, total
        self.step(done / total if total else 1.0)

    def step(self, within: float) -> None:
        """How far along the current phase is, 0 to 1 (a chunk or an index done: a few a second at most)."""
        self.within = min(1.0, within)
        self._write()

    def fraction(self) -> float:
        return self.starts.get(self.phase, 0.0) + self.weights.get(self.phase, 0.0) * self.within

    def finish(self) -> None:
        self.path.unlink(missing_ok=True)

    def _tick(self) -> int:
        if time.monotonic() - self.written_at >= WRITE_EVERY_SECONDS:
            self._write()
        return 0  # non-zero would abort the statement

    def _write(self) -> None:
        self.written_at = time.monotonic()
        record = {
            "realm": self.realm, "index": self.index, "phase": self.phase, "rows_done": self.rows_done,
            "rows_total": self.rows_total, "fraction": round(self.fraction(), 4), "started_at": self.started_at,
            "updated_at": time.time(), "pid": os.getpid(),
        }
        unfinished = self.path.with_name(f"{PROGRESS_FILE}.{os.getpid()}")
        try:
            unfinished.write_text(json.dumps(record))
            os.replace(unfinished, self.path)  # readers see the old record or the new, never half of one
        except OSError as error:
            logger.warning("could not record the build progress of realm %r: %s", self.realm, error)
