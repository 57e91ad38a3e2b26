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
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .engine import AccessConfig, AccessConfigError, normalize_for_memory_actions, parse_access_config
from .settled_file import SettledFile, SettledFileError
from .signals import access_config_reloaded

logger = logging.getLogger("access")

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


def _applied(before: LoadedAccessConfig, after: LoadedAccessConfig) -> None:
    changes = rule_changes(before.config, after.config)
    logger.info("reloaded access config %s (revision %s): %s", after.path, after.revision, changes)
    access_config_reloaded.send_robust(
        sender=None, added=list(changes.added), removed=list(changes.removed),
        changed=list(changes.changed), revision=after.revision,
    )


def _settled(path: Path) -> SettledFile[LoadedAccessConfig]:
    """The last good config of one file (access/settled_file.py: applied once whole and stable)."""
    return SettledFile(path, what="access config", parse=_parse, revision=lambda loaded: loaded.revision,
                       applied=_applied, errors=(AccessConfigError,), logger=logger)


_watcher: SettledFile[LoadedAccessConfig] | None = None
_watcher_lock = threading.Lock()


def _watcher_for_settings() -> SettledFile[LoadedAccessConfig] | None:
    global _watcher
    configured = getattr(settings, "MOBKIT_ACCESS_CONFIG", None)  # a host project may not set it
    if configured is None:
        return None
    path = Path(configured)
    with _watcher_lock:
        if _watcher is None or _watcher.path != path:
            try:
                _watcher = _settled(path)
            except (AccessConfigError, SettledFileError) as error:
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
    return watcher.settle()


def load_access_config_at_startup() -> LoadedAccessConfig:
    """Load the configured file afresh; ImproperlyConfigured naming the path and the problem if invalid."""
    global _watcher
    with _watcher_lock:
        _watcher = None
    return current_access_config()
