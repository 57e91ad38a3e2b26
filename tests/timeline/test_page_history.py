"""The timeline page a person can trust (docs/timeline-live.md §3): keyset "load older" to the first event, relative
times exact on hover, an empty result that says when a filter is the reason, and a page that works
without JavaScript (every control is a plain link or form)."""

from __future__ import annotations

import re
import time

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from mobkit_console.timeline import selectors
from mobkit_console.timeline.ingest import IncomingEvent
from mobkit_console.timeline.services import events_store
from tests.support.html import timeline_event_ids, timeline_older_href

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("reader", email="reader@example.test"))
    return client


def _store(count: int, *, identity: str = "identity:luka", timestamp_ms: int = 1_700_000_000_000) -> list[str]:
    rows = events_store(events=[IncomingEvent(None, identity, "memory.harvest.completed", timestamp_ms,
                                              {"realm": "default", "promoted": n}, None) for n in range(count)])
    return [row.event_id for row in rows]


@pytest.mark.parametrize("htmx", [False, True], ids=["plain links", "htmx fragments"])
def test_load_older_walks_every_event_once_down_to_the_first(reader, monkeypatch, htmx):
    monkeypatch.setattr(selectors.events_page, "__kwdefaults__", {"before": None, "limit": 7})
    ids = _store(23)

    html = reader.get("/console/timeline/").content.decode()
    seen = timeline_event_ids(html)
    headers = {"HX-Request": "true"} if htmx else {}
    for _ in range(10):  # an infinite-loop guard: 23 events are 4 pages of 7
        link = timeline_older_href(html)
        if link is None:
            break
        response = reader.get(f"/console/timeline/{link}", headers=headers)
        html = response.content.decode()
        if htmx:
            assert html.lstrip().startswith('<ol id="timeline-events" hx-swap-oob="beforeend">')
            assert "<html" not in html
        else:
            assert "Back to the newest events" in html and "ws-connect" not in html  # history, not live
        seen += timeline_event_ids(html)
    assert seen == list(reversed(ids))
    assert "This is the first event the log holds." in html


def test_new_events_do_not_shift_an_older_page(reader, monkeypatch):
    monkeypatch.setattr(selectors.events_page, "__kwdefaults__", {"before": None, "limit": 5})
    ids = _store(12)
    link = timeline_older_href(reader.get("/console/timeline/").content.decode())
    _store(3)  # arrive while the reader looks at the first page

    assert timeline_event_ids(reader.get(f"/console/timeline/{link}").content.decode()) == list(reversed(ids))[5:10]


def test_older_pages_keep_the_filters(reader, monkeypatch):
    monkeypatch.setattr(selectors.events_page, "__kwdefaults__", {"before": None, "limit": 2})
    luka = _store(5)
    _store(5, identity="identity:mira")

    link = timeline_older_href(reader.get("/console/timeline/", {"identity": "identity:luka"}).content.decode())
    assert "identity=identity%3Aluka" in link
    assert timeline_event_ids(reader.get(f"/console/timeline/{link}").content.decode()) == [luka[2], luka[1]]


@pytest.mark.parametrize("before", ["yesterday", "console-evt-", "42"])
def test_a_malformed_before_cursor_is_a_clear_400(reader, before):
    response = reader.get("/console/timeline/", {"before": before})
    assert response.status_code == 400
    assert "before must be an event id like console-evt-42" in response.content.decode()


def test_times_are_relative_with_the_exact_time_on_hover(reader):
    now_ms = int(time.time() * 1000)
    _store(1, timestamp_ms=now_ms - 5 * 60_000)

    html = reader.get("/console/timeline/").content.decode()
    exact = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime((now_ms - 5 * 60_000) / 1000))
    assert re.search(rf'<time datetime="[^"]+" title="{exact}">5 min ago</time>', html)


def test_an_empty_filtered_result_says_the_filter_is_why(reader):
    _store(3)

    html = reader.get("/console/timeline/", {"identity": "identity:nobody"}).content.decode()
    assert "No events match these filters." in html and "No events yet" not in html
    assert 'href="/console/timeline/">Show all events</a>' in html


def test_the_page_works_without_javascript(reader):
    _store(2)

    html = reader.get("/console/timeline/").content.decode()
    # The rows are in the page itself; filters are a plain GET form; the live indicator stays hidden
    # until timeline.js shows it, so a page without JavaScript never claims to be live.
    assert len(timeline_event_ids(html)) == 2
    assert '<form class="timeline-filters" method="get" action="/console/timeline/">' in html
    assert re.search(r'<p id="timeline-connection"[^>]* hidden>', html)
    assert "<script>" not in html and "style=" not in html
