"""Filters for showing MobKit values to people: epoch milliseconds and JSON objects."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from django import template

register = template.Library()


@register.filter
def epoch_ms(value: object) -> str:
    """Unix-epoch milliseconds as a UTC timestamp."""
    if isinstance(value, bool) or not isinstance(value, int):
        return ""
    try:
        moment = datetime.fromtimestamp(value / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return str(value)  # beyond what datetime represents: show the raw number, never fail
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


@register.filter
def compact_json(value: object) -> str:
    """The value as MobKit serializes it (compact, non-ASCII kept); autoescaping still applies."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
