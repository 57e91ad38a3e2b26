"""An operator's config file, applied only once it is whole and stable, the last good one kept.

docs/access.md §2.3: a changed file applies only once two reads at least ``STABLE_FOR_S`` apart
found the same bytes. A save that truncates the file and writes it in several steps can expose a
prefix that still parses; applying that would change what is in force for as long as it lasts.
An invalid edit or a vanished file keeps the last good content and is logged once. ``access.toml``
(access/config.py) and the alert rules file (docs/alerts.md §1) are both read this way.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

# Stat the file at most this often. A changed file applies at the check after the one that first
# read it, if the bytes are still the same: a valid edit is live within about two seconds.
RECHECK_INTERVAL_S = 1.0
STABLE_FOR_S = 0.5

_FileSignature = tuple[int, int, int]  # (mtime_ns, size, inode): an atomic rename changes the inode


class SettledFileError(Exception):
    """The file could not be read, or its content is not valid (the message says where and why)."""


def read_bytes(path: Path, *, what: str) -> tuple[bytes, _FileSignature]:
    try:
        with path.open("rb") as handle:
            raw = handle.read()
            stat = os.fstat(handle.fileno())
    except FileNotFoundError as error:
        raise SettledFileError(f"{what} file not found") from error
    except OSError as error:
        raise SettledFileError(f"{what} io error: {error}") from error
    return raw, (stat.st_mtime_ns, stat.st_size, stat.st_ino)


@dataclass(frozen=True)
class _Seen:
    """File content read once and not yet applied: it applies when a later read finds it unchanged."""

    raw: bytes
    signature: _FileSignature
    at: float  # time.monotonic() of the first read


class SettledFile(Generic[T]):
    """The last good parse of one file, re-read when the file's signature changes.

    ``parse(path, raw)`` returns the parsed content or raises ``errors``; ``revision(content)``
    tells two contents apart; ``applied(before, after)`` runs once a different valid content is in
    force (a log line, an audit entry). ``what`` names the file in log lines.
    """

    def __init__(self, path: Path, *, what: str, parse: Callable[[Path, bytes], T], revision: Callable[[T], str],
                 applied: Callable[[T, T], None], errors: tuple[type[Exception], ...] = (SettledFileError,),
                 logger: logging.Logger | None = None) -> None:
        self.path = path
        self.what = what
        self._parse = parse
        self._revision = revision
        self._applied = applied
        self._errors = (SettledFileError, *errors)
        self._logger = logger or logging.getLogger(__name__)
        self._lock = threading.Lock()
        raw, self._signature = read_bytes(path, what=what)
        self.loaded: T = parse(path, raw)
        self._seen: _Seen | None = None
        self._missing_logged = False
        self._checked_at = time.monotonic()

    def current(self) -> T:
        if time.monotonic() - self._checked_at >= RECHECK_INTERVAL_S:
            self.refresh()
        return self.loaded

    @property
    def settling(self) -> bool:
        """A changed file has been read once and waits for a second, identical read."""
        return self._seen is not None

    def refresh(self) -> None:
        with self._lock:
            self._checked_at = time.monotonic()
            try:
                stat = os.stat(self.path)
            except FileNotFoundError:
                if not self._missing_logged:
                    self._logger.error("%s is missing; keeping the last good %s", self.path, self.what)
                    self._missing_logged = True
                return
            self._missing_logged = False
            if self._seen is None and (stat.st_mtime_ns, stat.st_size, stat.st_ino) == self._signature:
                return
            try:
                raw, signature = read_bytes(self.path, what=self.what)
            except SettledFileError as error:
                self._logger.error("%s: %s; keeping the last good %s", self.path, error, self.what)
                return
            seen = self._seen
            if seen is None or seen.raw != raw or time.monotonic() - seen.at < STABLE_FOR_S:
                if seen is None or seen.raw != raw:
                    self._seen = _Seen(raw, signature, time.monotonic())
                return
            self._seen = None
            # Remember what was decided on, so a bad file is reported once, not every second.
            self._signature = signature
            try:
                loaded = self._parse(self.path, raw)
            except self._errors as error:
                self._logger.error("%s: %s; keeping the last good %s", self.path, error, self.what)
                return
            if self._revision(loaded) == self._revision(self.loaded):
                return
            before, self.loaded = self.loaded, loaded
            self._applied(before, loaded)

    def settle(self) -> T:
        """Check the file now; a changed file is read twice, ``STABLE_FOR_S`` apart (tests, tools)."""
        self.refresh()
        if self.settling:
            time.sleep(STABLE_FOR_S)
            self.refresh()
        return self.loaded
