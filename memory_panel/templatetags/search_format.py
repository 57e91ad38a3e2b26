"""Template helpers for search results and counts (docs/search.md §5)."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from memory_panel.search_text import MARK_END, MARK_START

register = template.Library()


@register.filter
def marked(text: str) -> SafeString:
    """Plain text with the snippet markers as ``<mark>``: escaped first, so record text stays text."""
    return mark_safe(escape(text).replace(MARK_START, "<mark>").replace(MARK_END, "</mark>"))


@register.filter
def hit_for(hits: dict[tuple[str, str], Any], record: Any) -> Any:
    """The search result behind a records row, or None outside a search."""
    return hits.get((record.realm, record.id)) if hits else None


@register.simple_tag
def count_total(count: Any) -> str:
    """``1,284``, or ``more than 10,000`` past the count's cap."""
    return f"more than {count.cap:,}" if count.capped else f"{count.value:,}"


@register.simple_tag
def count_range(count: Any, first: int, last: int) -> str:
    """``1–50 of 1,284``, or ``… of more than 10,000`` past the count's cap."""
    total = count_total(count)
    if last < first:
        return f"0 of {total}"
    return f"{first:,}–{last:,} of {total}"
