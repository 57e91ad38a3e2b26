"""How one event reads on the timeline page (shared by the page view and the HTML socket)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from django.template.loader import render_to_string

from memory_panel.templatetags.panel_format import record_url

from .events import is_warning, record_link

_SUMMARY_SKIP = frozenset({"detail"})  # a dream's run sheet is too long for one line


def event_row(envelope: dict[str, Any]) -> dict[str, Any]:
    data = envelope.get("data") or {}
    link = record_link(data)
    return {
        "event_id": envelope["event_id"],
        "dom_id": envelope["event_id"],
        "event_type": envelope["event_type"],
        "short_type": envelope["event_type"].removeprefix("memory."),
        "identity": envelope["identity"],
        "timestamp_ms": envelope["timestamp_ms"],
        "warning": is_warning(envelope["event_type"], data),
        "fields": [(key, _text(value)) for key, value in data.items() if key not in _SUMMARY_SKIP],
        "record_url": record_url(*link) if link else None,
    }


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, (dict, list)):
        return f"{len(value)} item{'s' if len(value) != 1 else ''}"
    text = str(value)
    return text if len(text) <= 160 else f"{text[:157]}…"


def render_live_events(envelopes: Sequence[str]) -> str:
    """One frame for the htmx ws extension: each new row (oldest first) prepended out of band."""
    return "".join(_live_fragment(envelope) for envelope in envelopes)


# Every open timeline page gets the same fragment for an event (a row shows the event, never the
# reader), so each is rendered once per process, not once per socket. Keyed by the envelope's
# JSON text, which the group message carries as one shared string.
@lru_cache(maxsize=4096)
def _live_fragment(envelope: str) -> str:
    return render_to_string("timeline/_live_event.html", {"row": event_row(json.loads(envelope))})


def render_replay_unavailable(requested: str, latest: str | None) -> str:
    return render_to_string("timeline/_replay_unavailable.html", {"requested": requested, "latest": latest})
