"""How one event reads on the timeline page (shared by the page view and the HTML socket)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from django.template.loader import render_to_string

from memory_panel.selectors.named_records import RecordRef

from .events import is_warning, record_link
from .named import as_seen, events_named
from .sentences import event_sentence
from .services import envelope_json

if TYPE_CHECKING:
    from access.caller import Access

RAW_VALUE_MAX = 160  # characters of one raw field shown under an event's sentence


def event_rows(envelopes: Sequence[dict[str, Any]], *, access: Access) -> list[dict[str, Any]]:
    """The rows for ``envelopes`` as this caller may see them: a record named by its title when the
    caller may read it, and not named at all when it may not (docs/access.md §2.8)."""
    named = events_named(envelopes, access=access, titles=True)
    return [event_row(as_seen(envelope, named.hidden), named.titles) for envelope in envelopes]


def event_row(envelope: dict[str, Any], titles: dict[RecordRef, str]) -> dict[str, Any]:
    data = envelope.get("data") or {}
    link = record_link(data)
    return {
        "event_id": envelope["event_id"],
        "dom_id": envelope["event_id"],
        "event_type": envelope["event_type"],
        "identity": envelope["identity"],
        "timestamp_ms": envelope["timestamp_ms"],
        "warning": is_warning(envelope["event_type"], data),
        "sentence": event_sentence(envelope["event_type"], envelope["identity"], data),
        # Sorted: a JSON object's key order is not kept by every console database (PostgreSQL's
        # jsonb reorders it), and a live row must equal the same row rendered from the log.
        "fields": [(key, _raw(data[key])) for key in sorted(data)],
        "record_id": link[0] if link else None,
        "realm": link[1] if link else None,
        # docs/history.md §4: each event links to its realm as it stood then.
        "data_realm": data.get("realm") if isinstance(data.get("realm"), str) else None,
        "titles": titles,
    }


def _raw(value: Any) -> str:
    """A data field as the event carried it: strings as they are, anything else as JSON."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= RAW_VALUE_MAX else f"{text[: RAW_VALUE_MAX - 1]}…"


def render_live_events(envelopes: Sequence[str], *, access: Access) -> str:
    """One frame for the htmx ws extension: each new row (oldest first) prepended out of band.

    The row is the first render's own template, with the records it names as this caller may see them.
    """
    parsed = [json.loads(envelope) for envelope in envelopes]
    named = events_named(parsed, access=access, titles=True)
    seen = [as_seen(envelope, named.hidden) for envelope in parsed]
    return "".join(
        _live_fragment(envelope_json(envelope) if envelope is not original else text, _title(envelope, named.titles))
        for text, original, envelope in zip(envelopes, parsed, seen)
    )


def _named_record(envelope: dict[str, Any]) -> RecordRef | None:
    link = record_link(envelope.get("data") or {})
    return (link[1], link[0]) if link else None


def _title(envelope: dict[str, Any], titles: dict[RecordRef, str]) -> str | None:
    ref = _named_record(envelope)
    return titles.get(ref) if ref else None


# A row shows the event and, at most, the title of the record it names, so a fragment is rendered
# once per process for every reader who is shown that title, not once per socket. Keyed by the
# envelope's JSON text as this reader sees it, which the readers of one tick share.
@lru_cache(maxsize=4096)
def _live_fragment(envelope: str, title: str | None) -> str:
    parsed = json.loads(envelope)
    ref = _named_record(parsed)
    row = event_row(parsed, {ref: title} if ref and title is not None else {})
    return render_to_string("timeline/_live_event.html", {"row": row})


def render_replay_unavailable(requested: str, latest: str | None) -> str:
    return render_to_string("timeline/_replay_unavailable.html", {"requested": requested, "latest": latest})
