"""The alert rules file (``MOBKIT_ALERTS_CONFIG``): ``[[rules]]`` tables, validated with errors
that name the line (docs/alerts.md §1)."""

from __future__ import annotations

import hashlib
import re
import tomllib
from typing import Any

from .conditions import CONDITIONS, condition_for
from .definitions import AlertRule, AlertRules
from .durations import duration_s
from .targets import TargetError, target_for

RULE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
KNOWN_KEYS = frozenset({"id", "when", "notify", "realms", "threshold", "window", "cooldown", "as_subject",
                        "tile", "identity", "tainted_only"})


class RulesError(Exception):
    """The rules file is not valid; the message names the line (and the rule) at fault."""


def _rule_lines(text: str) -> list[int]:
    """The 1-based line of each ``[[rules]]`` header, in order."""
    return [number for number, line in enumerate(text.splitlines(), 1) if line.strip().startswith("[[rules]]")]


def _key_line(text: str, start: int, key: str) -> int:
    """The line of ``key = …`` in the table that starts at ``start`` (the header's line if absent)."""
    lines = text.splitlines()
    for number in range(start, len(lines)):
        stripped = lines[number].strip()
        if stripped.startswith("["):
            break
        if re.match(rf"^{re.escape(key)}\s*=", stripped):
            return number + 1
    return start


def parse_rules(raw: bytes, *, path: str | None = None) -> AlertRules:
    """Every rule of the file, checked; RulesError naming the first line at fault."""
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as error:
        raise RulesError(f"alert rules are not UTF-8: {error}") from error
    except tomllib.TOMLDecodeError as error:
        # tomllib names the line and column, except at the end of the file: name its last line then.
        where = "" if "line" in str(error) else f" (line {max(len(text.splitlines()), 1)})"
        raise RulesError(f"alert rules could not be parsed: {error}{where}") from error
    unknown = sorted(set(data) - {"rules"})
    if unknown:
        raise RulesError(f"alert rules: unknown top-level key {unknown[0]!r} (only [[rules]] tables)")
    tables = data.get("rules", [])
    if not isinstance(tables, list):
        raise RulesError("alert rules: rules must be [[rules]] tables")
    starts = _rule_lines(text)
    rules: list[AlertRule] = []
    seen: dict[str, int] = {}
    for position, table in enumerate(tables):
        start = starts[position] if position < len(starts) else 1
        rule = _parse_rule(table, text=text, start=start)
        if rule.id in seen:
            raise RulesError(f"line {start}: rule id {rule.id!r} is already used by the rule at line {seen[rule.id]}")
        seen[rule.id] = start
        rules.append(rule)
    return AlertRules(rules=tuple(rules), revision=hashlib.sha256(raw).hexdigest()[:16], path=path,
                      by_id={rule.id: rule for rule in rules})


def _parse_rule(table: Any, *, text: str, start: int) -> AlertRule:
    def fail(key: str, message: str) -> RulesError:
        return RulesError(f"line {_key_line(text, start, key)}: {message}")

    if not isinstance(table, dict):
        raise RulesError(f"line {start}: a rule must be a [[rules]] table")
    for key in table:
        if key not in KNOWN_KEYS:
            raise fail(key, f"unknown key {key!r} (known: {', '.join(sorted(KNOWN_KEYS))})")
    rule_id = table.get("id")
    if not isinstance(rule_id, str) or not RULE_ID.match(rule_id):
        raise fail("id", "id must be letters, digits, '.', '_' or '-' (at most 64)")
    when = table.get("when")
    if when not in CONDITIONS:
        raise fail("when", f"rule {rule_id!r}: when must be one of {', '.join(CONDITIONS)}, not {when!r}")
    notify = table.get("notify")
    if not isinstance(notify, list) or not notify or not all(isinstance(url, str) for url in notify):
        raise fail("notify", f"rule {rule_id!r}: notify must be a non-empty list of URLs")
    for url in notify:
        try:
            target_for(url)
        except TargetError as error:
            raise fail("notify", f"rule {rule_id!r}: {error}") from error
    realms = table.get("realms", [])
    if not isinstance(realms, list) or not all(isinstance(name, str) and name for name in realms):
        raise fail("realms", f"rule {rule_id!r}: realms must be a list of realm names")
    fields: dict[str, Any] = {}
    for key in ("window", "cooldown"):
        if key in table:
            try:
                fields[f"{key}_s"] = duration_s(table[key], name=key)
            except ValueError as error:
                raise fail(key, f"rule {rule_id!r}: {error}") from error
    for key in ("as_subject", "tile", "identity"):
        if key in table:
            if not isinstance(table[key], str) or not table[key].strip():
                raise fail(key, f"rule {rule_id!r}: {key} must be a non-empty string")
            fields[key] = table[key].strip()
    if "tainted_only" in table:
        if not isinstance(table["tainted_only"], bool):
            raise fail("tainted_only", f"rule {rule_id!r}: tainted_only must be true or false")
        fields["tainted_only"] = table["tainted_only"]
    rule = AlertRule(id=rule_id, when=when, notify=tuple(notify), realms=tuple(realms), line=start, **fields)
    condition = condition_for(rule)
    try:
        threshold = condition.threshold_of(table.get("threshold"))
        condition.check(rule)
    except ValueError as error:
        named = [key for key in ("threshold", "tile", "identity") if key in table and key in str(error)]
        raise fail(named[0] if named else "when", f"rule {rule_id!r}: {error}") from error
    return AlertRule(**{**rule.__dict__, "threshold": threshold})
