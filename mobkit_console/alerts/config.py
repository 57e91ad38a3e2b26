"""Loading and live-reloading ``MOBKIT_ALERTS_CONFIG`` the way access.toml is (access/settled_file.py):
refused at start when broken, naming the line; while running, an edit applies once whole and stable,
a broken one is logged and the last good rules stay; each reload is an audit entry (docs/alerts.md §1)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from access.settled_file import SettledFile, SettledFileError
from mobkit_console.audit.services import NOBODY, audit_record

from .definitions import NO_RULES, AlertRules
from .rules import RulesError, parse_rules

logger = logging.getLogger("mobkit_console.alerts")


def _parse(path: Path, raw: bytes) -> AlertRules:
    return parse_rules(raw, path=str(path))


def _applied(before: AlertRules, after: AlertRules) -> None:
    old = {rule.id: rule for rule in before.rules}
    new = {rule.id: rule for rule in after.rules}
    detail = {
        "added": sorted(new.keys() - old.keys()),
        "removed": sorted(old.keys() - new.keys()),
        "changed": sorted(rule_id for rule_id in old.keys() & new.keys() if old[rule_id] != new[rule_id]),
        "revision": after.revision,
    }
    logger.info("reloaded alert rules %s (revision %s)", after.path, after.revision)
    audit_record(action="alerts.reload", detail=detail, actor=NOBODY)


_settled: SettledFile[AlertRules] | None = None
_lock = threading.Lock()


def _settled_for_settings() -> SettledFile[AlertRules] | None:
    global _settled
    configured = getattr(settings, "MOBKIT_ALERTS_CONFIG", None)
    if configured is None:
        return None
    path = Path(configured)
    with _lock:
        if _settled is None or _settled.path != path:
            try:
                _settled = SettledFile(path, what="alert rules", parse=_parse, revision=lambda rules: rules.revision,
                                       applied=_applied, errors=(RulesError,), logger=logger)
            except (RulesError, SettledFileError) as error:
                raise ImproperlyConfigured(f"MOBKIT_ALERTS_CONFIG={path}: {error}") from error
        return _settled


def current_alert_rules() -> AlertRules:
    """The rules in force now, re-read at most about once a second when the file changed."""
    settled = _settled_for_settings()
    return NO_RULES if settled is None else settled.current()


def refresh_alert_rules() -> AlertRules:
    """Check the file now (tests and tools): a changed file applies when two reads agree."""
    settled = _settled_for_settings()
    return NO_RULES if settled is None else settled.settle()


def load_alert_rules_at_startup() -> AlertRules:
    """Load the configured file afresh; ImproperlyConfigured naming the path and the line at fault."""
    global _settled
    with _lock:
        _settled = None
    return current_alert_rules()
