"""Durations in the rules file: ``90`` (seconds), ``"90s"``, ``"15m"``, ``"2h"``, ``"1d"`` (docs/alerts.md §1);
and times as notices and the page write them."""

from __future__ import annotations

import datetime
import re
from typing import Any

DURATION = re.compile(r"^(\d+)\s*(s|m|h|d)$")
UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration_s(value: Any, *, name: str) -> int:
    """The seconds ``value`` names; ValueError naming ``name`` when it names none."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = DURATION.match(value.strip()) if isinstance(value, str) else None
    if match is None or int(match[1]) <= 0:
        raise ValueError(f"{name} must be a duration such as \"15m\" or a number of seconds, not {value!r}")
    return int(match[1]) * UNIT_S[match[2]]


def span(seconds: int) -> str:
    """``seconds`` the way the rules file writes it: 900 → "15m"."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def moment(ms: int) -> str:
    """A time in milliseconds as ISO 8601 UTC to the second: what notices and the page show."""
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
