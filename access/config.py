"""Loading and live-reloading the operator's `access.toml` (`settings.MOBKIT_ACCESS_CONFIG`).

No setting: access control is disabled and everything is allowed (docs/wire-contract.md, docs/access.md §2.6). With a
setting, the file must be valid at start-up (`AccessConfig.ready()` refuses to start otherwise).
While running, an edit applies within a few seconds, once two reads some time apart agree (a file
caught half-written is never applied), and the log names the rule ids it added, removed or
changed; an invalid edit or a vanished file keeps the last good config and is logged, so a typo
never opens or closes the console by accident.

A file must say `enabled = true` or `enabled = false` itself. MobKit's serde default for a missing
`enabled` is false (docs/access.md §2.3, §2.6: a config that says nothing allows everything), so an empty,
whitespace-only or truncated file would read as "access control off". The console refuses such a
file instead: only an unset MOBKIT_ACCESS_CONFIG or an explicit `enabled = false` opens
the console. The JSON shape `engine.parse_access_config` reads keeps MobKit's default.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .engine import AccessConfig, AccessConfigError, normalize_for_memory_actions, parse_access_config
from .signals import access_config_reloaded

logger = logging.getLogger("access")

# Stat the file at most this often. A changed file applies at the check after the one that first
# read it, if the bytes are still the same: a valid edit is live within about two seconds.
RECHECK_INTERVAL_S = 1.0
STABLE_FOR_S = 0.5

_FileSignature = tuple[int, int, int]  # (mtime_ns, size, inode): an atomic rename changes the inode


@dataclass(frozen=True)
class LoadedAccessConfig:
    config: AccessConfig
    revision: str  # short sha256 of the file bytes; "0" when no file is configured
    available: bool  # False when MOBKIT_ACCESS_CONFIG is not set
    path: Path | None


NO_ACCESS_CONTROL = LoadedAccessConfig(config=AccessConfig(), revision="0", available=False, path=None)


@dataclass(frozen=True)
class RuleChanges:
    """Which rule ids one reload adds, removes, or keeps with other content (for logs and audits)."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def __str__(self) -> str:
        named = (("added", self.added), ("removed", self.removed), ("changed", self.changed))
        parts = [f"rules {what}: {', '.join(ids)}" for what, ids in named if ids]
        return "; ".join(parts) if parts else "no rule changed"


def rule_changes(before: AccessConfig, after: AccessConfig) -> RuleChanges:
    """The rule ids ``after`` adds to ``before``, removes from it, and keeps with different content."""
    old = {rule.id: rule for rule in before.rules}
    new = {rule.id: rule for rule in after.rules}
    return RuleChanges(
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        changed=tuple(sorted(rule_id for rule_id in old.keys() & new.keys() if old[rule_id] != new[rule_id])),
    )


def _read_bytes(path: Path) -> tuple[bytes, _FileSignature]:
    try:
        with path.open("rb") as handle:
            raw = handle.read()
            stat = os.fstat(handle.fileno())
    except FileNotFoundError as error:
        raise AccessConfigError("access config file not found") from error
    except OSError as error:
        raise AccessConfigError(f"access config io error: {error}") from error
    return raw, (stat.st_mtime_ns, stat.st_size, stat.st_ino)


def _parse(path: Path, raw: bytes) -> LoadedAccessConfig:
    """Parse, validate and normalize one access file's bytes; AccessConfigError on any failure."""
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise AccessConfigError(f"access config could not be parsed: {error}") from error
    parsed = parse_access_config(data)  # MobKit's own validation messages come first
    if "enabled" not in data:
        # An empty or cut-short file must never switch access control off (see the module doc).
        raise AccessConfigError(
            "access config: the file does not say enabled = true or enabled = false (an empty or "
            "partial access.toml never turns access control off)"
        )
    config, rewritten = normalize_for_memory_actions(parsed)
    if rewritten:
        # docs/access.md §2.3: MobKit saves this rewrite back; the console is read-only, so it lives in memory.
        logger.warning(
            "%s predates the memory read actions: granting agent.memory.read wherever agent.view is "
            "granted (in memory only; write explicit agent.memory.read / mob.memory.read / "
            "memory.quarantine.review rules to silence this)",
            path,
        )
    return LoadedAccessConfig(config=config, revision=hashlib.sha256(raw).hexdigest()[:16], available=True, path=path)


@dataclass(frozen=True)
class _Seen:
    """File content read once and not yet applied: it applies when a later read finds it unchanged."""

    raw: bytes
    signature: _FileSignature
    at: float  # time.monotonic() of the first read


class _Watcher:
    """The last good config of one file, re-read when the file's signature changes.

    docs/access.md §2.3: a changed file applies only once two reads at least ``STABLE_FOR_S``
    apart found the same bytes. A save that truncates the file and writes it in several steps
    can expose a prefix that still parses (a rule cut before its ``agents`` line is unscoped, and
    the deny rules after it are gone); applying that would widen grants for as long as it lasts.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        raw, self._signature = _read_bytes(path)
        self.loaded = _parse(path, raw)
        self._seen: _Seen | None = None
        self._missing_logged = False
        self._checked_at = time.monotonic()

    def current(self) -> LoadedAccessConfig:
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
                    logger.error("%s is missing; keeping the last good access config", self.path)
                    self._missing_logged = True
                return
            self._missing_logged = False
            if self._seen is None and (stat.st_mtime_ns, stat.st_size, stat.st_ino) == self._signature:
                return
            try:
                raw, signature = _read_bytes(self.path)
            except AccessConfigError as error:
                logger.error("%s: %s; keeping the last good access config", self.path, error)
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
                loaded = _parse(self.path, raw)
            except AccessConfigError as error:
                logger.error("%s: %s; keeping the last good access config", self.path, error)
                return
            if loaded.revision == self.loaded.revision:
                return
            changes = rule_changes(self.loaded.config, loaded.config)
            self.loaded = loaded
            logger.info("reloaded access config %s (revision %s): %s", self.path, loaded.revision, changes)
            access_config_reloaded.send_robust(
                sender=None, added=list(changes.added), removed=list(changes.removed),
                changed=list(changes.changed), revision=loaded.revision,
            )


_watcher: _Watcher | None = None
_watcher_lock = threading.Lock()


def _watcher_for_settings() -> _Watcher | None:
    global _watcher
    configured = getattr(settings, "MOBKIT_ACCESS_CONFIG", None)  # a host project may not set it
    if configured is None:
        return None
    path = Path(configured)
    with _watcher_lock:
        if _watcher is None or _watcher.path != path:
            try:
                _watcher = _Watcher(path)
            except AccessConfigError as error:
                # There is no last good config to fall back on, so nothing safe to serve.
                raise ImproperlyConfigured(f"MOBKIT_ACCESS_CONFIG={path}: {error}") from error
        return _watcher


def current_access_config() -> LoadedAccessConfig:
    """The config in force now, re-read at most about once a second when the file changed."""
    watcher = _watcher_for_settings()
    return NO_ACCESS_CONTROL if watcher is None else watcher.current()


def refresh_access_config() -> LoadedAccessConfig:
    """Check the file now instead of waiting for the next recheck (for tests and operators' tools).

    A changed file is read twice, ``STABLE_FOR_S`` apart, and applied when both reads agree.
    """
    watcher = _watcher_for_settings()
    if watcher is None:
        return NO_ACCESS_CONTROL
    watcher.refresh()
    if watcher.settling:
        time.sleep(STABLE_FOR_S)
        watcher.refresh()
    return watcher.loaded


def load_access_config_at_startup() -> LoadedAccessConfig:
    """Load the configured file afresh; ImproperlyConfigured naming the path and the problem if invalid."""
    global _watcher
    with _watcher_lock:
        _watcher = None
    return current_access_config()
