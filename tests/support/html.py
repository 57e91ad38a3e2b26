"""Reading the console's HTML in tests: row ids, the "load more" link, the timeline's events, link and count."""

from __future__ import annotations

import html
import re

_ROW_ID = re.compile(r'<tr class="record-row[^"]*" data-memory-id="([^"]+)"')
_MORE = re.compile(r'<tr id="records-more".*?<a class="button" href="([^"]+)"', re.S)
_TIMELINE_EVENT = re.compile(r'<li id="(console-evt-\d+)"')
_TIMELINE_OLDER = re.compile(r'<a class="button" href="([^"]+)" hx-get="[^"]+"[^>]*>Load older events</a>')
_TIMELINE_COUNT = re.compile(r'<p id="timeline-count"[^>]*?( hidden)?>(.*?)</p>', re.S)


def _href(link: re.Pattern[str], page: str) -> str | None:
    """The first href ``link`` finds, unescaped as a browser would follow it."""
    match = link.search(page)
    return html.unescape(match.group(1)) if match else None


def row_ids(page: str) -> list[str]:
    return _ROW_ID.findall(page)


def more_href(page: str) -> str | None:
    """The Records "load more" link."""
    return _href(_MORE, page)


def timeline_event_ids(page: str) -> list[str]:
    return _TIMELINE_EVENT.findall(page)


def timeline_older_href(page: str) -> str | None:
    """The timeline's "Load older events" link."""
    return _href(_TIMELINE_OLDER, page)


def timeline_count(page: str) -> str | None:
    """The count line above the timeline's events as a reader sees it; None when absent or hidden."""
    match = _TIMELINE_COUNT.search(page)
    return None if match is None or match.group(1) else match.group(2)
