"""Template helpers for the Memory panel pages: human sizes and ages, scopes, authors, links.

Every helper that returns markup builds it with ``format_html``, so record data stays escaped.
"""

from __future__ import annotations

import functools
import json
import re
import time
from datetime import datetime, timezone
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django import template
from django.urls import get_script_prefix, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from memory_panel.wording import author_words, scope_words, value_words

register = template.Library()

_BYTE_UNITS = ("KiB", "MiB", "GiB", "TiB")
_SPANS = ((86_400 * 365, "y"), (86_400 * 30, "mo"), (86_400, "d"), (3_600, "h"), (60, "min"))


@register.filter
def human_bytes(value: Any) -> str:
    """1536 -> "1.5 KiB"; counts below 1 KiB stay exact ("812 B")."""
    if isinstance(value, bool) or not isinstance(value, int):
        return ""
    if abs(value) < 1024:
        return f"{value} B"
    size = float(value)
    for unit in _BYTE_UNITS:
        size /= 1024
        if abs(size) < 1024 or unit == _BYTE_UNITS[-1]:
            return f"{size:.1f} {unit}"
    return str(value)


def _moment(ms: Any) -> datetime | None:
    if isinstance(ms, bool) or not isinstance(ms, int):
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None  # a hand-edited timestamp beyond datetime's range: shown raw, never a 500


def _span(seconds: int) -> str | None:
    """A duration in its largest whole unit ("3 d", "5 min"); None under a minute."""
    return next((f"{seconds // span} {unit}" for span, unit in _SPANS if seconds >= span), None)


def _now_ms() -> int:
    return int(time.time() * 1000)


def relative_ms(ms: int, *, now_ms: int | None = None) -> str:
    """How long ago ``ms`` was, coarsely: "just now", "5 min ago", "3 d ago", "in 2 h"."""
    seconds = ((_now_ms() if now_ms is None else now_ms) - ms) // 1000
    amount = _span(abs(seconds))
    if amount is None:
        return "just now"
    return f"in {amount}" if seconds < 0 else f"{amount} ago"


def waited_ms(ms: int, *, now_ms: int | None = None) -> str:
    """How long something that arrived at ``ms`` has been waiting: "waiting 3 d"."""
    seconds = max(((_now_ms() if now_ms is None else now_ms) - ms) // 1000, 0)
    return f"waiting {_span(seconds) or 'under a minute'}"


def _time_tag(ms: Any, text: Callable[[int], str]) -> SafeString:
    """A ``<time>`` showing ``text(ms)``, with the exact UTC time on hover and for machines."""
    moment = _moment(ms)
    if moment is None:
        return format_html('<span class="muted">{}</span>', ms if ms is not None else "—")
    # Every part is made here from an integer (digits, units, "ago"): nothing to escape, and this
    # tag runs for each row of every list.
    exact = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return mark_safe(f'<time datetime="{moment.isoformat(timespec="milliseconds")}" title="{exact}">{text(ms)}</time>')


@register.simple_tag
def age(ms: Any) -> SafeString:
    """The relative age: "3 d ago"."""
    return _time_tag(ms, relative_ms)


@register.simple_tag
def exact_time(ms: Any) -> str:
    """The absolute time beside a relative one: "2026-11-29 14:02 UTC" (empty for no time)."""
    moment = _moment(ms)
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else ""


@register.simple_tag
def waited(ms: Any) -> SafeString:
    """How long a queued row has waited since ``ms``: "waiting 3 d"."""
    return _time_tag(ms, waited_ms)


@register.filter
def scope_label(row: Any) -> str:
    """``identity:luka``, ``mob ops``, ``realm``: from any row with ``scope_kind`` and ``scope_key``."""
    return scope_words(getattr(row, "scope_kind", ""), getattr(row, "scope_key", ""))


# docs/daily-use.md §8: every page says an author, a flag or an enum the same way.
register.filter("author_words", author_words)
register.filter("words", value_words)


@register.filter
def floor_fraction(row: Any) -> str:
    """How close a scope is to its floor (4,000 active records or 32 MiB), 0..1, for a <meter>."""
    return f"{row.floor_fraction:.3f}"


@register.simple_tag
def record_url(memory_id: str, realm: str | None = None) -> str:
    """The biography of one record; ``realm`` pins the realm so a duplicate id elsewhere cannot win."""
    if not memory_id:
        return reverse("memory-records")  # an empty id names no record; the list is the nearest page
    url = _record_path(memory_id)
    return f"{url}?{_realm_query(realm)}" if realm else url


@functools.lru_cache(maxsize=256)
def _realm_query(realm: str) -> str:
    # Every row of a list links with its realm, and a page's rows share one or two realms.
    return urlencode({"realm": realm})


# Characters URL quoting leaves as they are: an id made of them stands in the path unchanged
# (but for "." and "..", which reverse() escapes so that no link walks up a directory).
_PLAIN_ID = re.compile(r"(?!\.\.?$)[A-Za-z0-9._-]+")


def _record_path(memory_id: str) -> str:
    """``reverse("memory-record", args=[memory_id])``, without resolving the URLconf for every row
    of a list when the id needs no quoting (MobKit's ids never do; a hand-edited one may)."""
    if not _PLAIN_ID.fullmatch(memory_id):
        return reverse("memory-record", args=[memory_id])
    head, _, tail = _record_path_around(get_script_prefix())
    return f"{head}{memory_id}{tail}"


@functools.lru_cache(maxsize=8)
def _record_path_around(script_prefix: str) -> tuple[str, str, str]:
    # The script prefix is part of every reversed URL; the cache is keyed on it.
    return reverse("memory-record", args=["~"]).rpartition("~")


@register.simple_tag
def record_ref(memory_id: str, realm: str | None, titles: dict[tuple[str, str], str] | None) -> SafeString:
    """A link naming one record by its title, its id in the tooltip and on the record's page
    (docs/daily-use.md §7).

    ``titles`` holds only records the caller may read (``named_records.record_titles``): any other
    record stays its id.
    """
    url = record_url(memory_id, realm)
    title = (titles or {}).get((realm or "", memory_id))
    if title is None:
        return format_html('<a class="record-ref mono small" href="{}">{}</a>', url, memory_id)
    return format_html('<a class="record-ref" href="{}" title="{}" data-memory-id="{}">{}</a>',
                       url, memory_id, memory_id, title)


@register.simple_tag
def dream_name(run_id: str, started_ms: Any) -> SafeString:
    """A steward dream run named for people, by when it started; its id in the tooltip (docs/daily-use.md §7)."""
    started = exact_time(started_ms)
    return format_html('<span class="run-name" title="run {}">{}</span>', run_id,
                       f"Dream of {started}" if started else "Dream")


@register.simple_tag
def records_url(**params: Any) -> str:
    """The Records list filtered by ``params`` (empty values left out)."""
    query = urlencode({key: value for key, value in params.items() if value not in (None, "")})
    return f"{reverse('memory-records')}?{query}" if query else reverse("memory-records")


@register.filter
def pairs(value: Any) -> list[tuple[str, str]]:
    """A JSON object's entries as (key, text): strings as they are, anything else as JSON.

    Iterating ``value.items`` in a template would look up a key named "items" first; record
    provenance is free-form JSON, so that lookup must not be left to chance.
    """
    if not isinstance(value, dict):
        return []
    return [
        (str(key), item if isinstance(item, str) else json.dumps(item, ensure_ascii=False))
        for key, item in value.items()
    ]


@register.filter
def served_by_asgi(request: Any) -> bool:
    """Whether this request came through an ASGI server, which also serves the sockets live panels
    need: Django's ASGI request has a scope, and a page request the ASGI server handed to the
    WSGI handler keeps it in its environ (docs/serving.md §2). The test client and a plain WSGI
    server have neither, and their pages stay static."""
    return hasattr(request, "scope") or "asgi.scope" in getattr(request, "META", {})


@register.simple_tag(takes_context=True)
def realm_note(context: template.Context, realm: str) -> SafeString:
    """`` · realm NAME`` beside a row of a page that shows all of several realms (docs/daily-use.md §3).

    A page showing one realm, or a console with one realm, says nothing: every row is from it.
    """
    if context.get("realm") or (context.get("realm_count") or 0) < 2:
        return mark_safe("")
    return format_html('<span class="realm-note small muted"> · realm {}</span>', realm)


@register.simple_tag
def realm_at_url(ms: Any, realm: str | None = None) -> str:
    """The Records page as the realm stood at ``ms`` (docs/history.md §4), to the millisecond, so
    what happened at that moment is in it; "" for no time."""
    moment = _moment(ms)
    if moment is None:
        return ""
    query = {"as_of": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")}
    if realm:
        query["realm"] = realm
    return f"{reverse('memory-records')}?{urlencode(query)}"
