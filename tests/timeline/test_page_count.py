"""The timeline page says how many events match (docs/timeline-live.md §6): exactly the events the caller can page
through with "Load older", narrowed by the filters, exact up to the cap and "more than N" past it."""

from __future__ import annotations

import importlib
import re

import pytest
from django.apps import apps
from django.test import Client

from mobkit_console.timeline import selectors, services
from mobkit_console.timeline.ingest import IncomingEvent
from mobkit_console.timeline.models import EventVisibilityKey, TimelineEvent
from mobkit_console.timeline.services import events_prune, events_store
from tests.support.clients import signed_in_client, user_with_subject
from tests.support.html import timeline_count, timeline_event_ids, timeline_older_href
from tests.support.postures import NO_OPERATOR, NOBODY, READER, REVIEWER, ROOT, SCOUT_READER
from tests.timeline.audience import VISIBILITY_EVENTS, VISIBLE_TO

pytestmark = pytest.mark.django_db

URL = "/console/timeline/"
PAGE = 4  # rows per page here, so every walk crosses several pages

# Every visibility class, several times over: plain and scoped agent events, _system with and
# without a scope of each kind, and a scope the data names only half (an integer key: no scope).
MIX = [
    *[("identity:luka", "memory.harvest.completed", {"promoted": n}) for n in range(3)],
    *[("identity:mira", "memory.harvest.completed", {"promoted": n}) for n in range(2)],
    *[("identity:luka", "memory.record.remembered", {"record_id": f"mem-l{n}", "scope_kind": "identity",
                                                     "scope_key": "identity:luka"}) for n in range(3)],
    ("identity:router", "memory.record.remembered", {"record_id": "mem-r", "scope_kind": "identity",
                                                     "scope_key": "identity:router"}),
    ("identity:scout", "memory.record.remembered", {"record_id": "mem-s", "scope_kind": "identity",
                                                    "scope_key": "identity:scout"}),
    *[("_system", "memory.dream.started", {"run_id": f"dream-{n}"}) for n in range(2)],
    *[("_system", "memory.promotion.pending_gate", {"pending_id": f"gate-{n}", "record_id": "mem-m",
                                                    "scope_kind": "mob", "scope_key": "team"}) for n in range(2)],
    *[("_system", "memory.write.quarantined", {"reason": "policy", "scope_kind": "identity",
                                               "scope_key": "identity:luka"}) for n in range(2)],
    ("_system", "memory.record.updated", {"record_id": "mem-o", "scope_kind": "operator", "scope_key": "oncall"}),
    ("_system", "memory.record.forgotten", {"record_id": "mem-d", "scope_kind": "realm", "scope_key": "default"}),
    ("_system", "memory.record.remembered", {"record_id": "mem-h", "scope_kind": "mob", "scope_key": 7}),
    *[("identity:luka", "memory.budget.denied", {"stage": "dream", "reason": "tokens"}) for n in range(2)],
]

# (posture, subject): None is no access.toml at all.
CALLERS = [
    (None, READER),
    *[("timeline_audience", f"{name}@example.test") for name in ("alice", "bob", "carol", "dave", "erin")],
    *[("standard", subject) for subject in (ROOT, READER, REVIEWER, NO_OPERATOR, SCOUT_READER, NOBODY)],
    *[("star_and_one_agent_viewers", subject) for subject in ("star@example.test", "router@example.test")],
]
FILTERS = [
    {},
    {"event_type": "memory.record.remembered"},
    {"identity": "_system"},
    {"identity": "identity:luka", "event_type": "memory.harvest.completed"},
]


def store(events: list[tuple[str, str, dict]]) -> list[str]:
    rows = events_store(events=[IncomingEvent(None, identity, event_type, 1_700_000_000_000,
                                              {"realm": "default", **data}, None)
                                for identity, event_type, data in events])
    return [row.event_id for row in rows]


def walk(client: Client, params: dict[str, str]) -> tuple[list[str], list[str | None]]:
    """Every event id the caller is shown paging down to the first event, and each page's count line."""
    page = client.get(URL, params).content.decode()
    shown, counts = timeline_event_ids(page), [timeline_count(page)]
    for _ in range(50):  # a loop guard far past the mix's pages
        link = timeline_older_href(page)
        if link is None:
            return shown, counts
        page = client.get(URL + link).content.decode()
        shown += timeline_event_ids(page)
        counts.append(timeline_count(page))
    raise AssertionError("the walk never reached the first event")


def events(total: int) -> str:
    return f"{total:,} event{'s' if total != 1 else ''}"


@pytest.fixture
def small_pages(monkeypatch):
    monkeypatch.setattr(selectors.events_page, "__kwdefaults__", {"before": None, "limit": PAGE})


@pytest.mark.parametrize(("posture_name", "subject"), CALLERS, ids=lambda v: str(v))
@pytest.mark.parametrize("params", FILTERS, ids=lambda p: "&".join(f"{k}={v}" for k, v in p.items()) or "unfiltered")
def test_the_count_is_what_the_caller_can_page_through(posture, small_pages, posture_name, subject, params, settings):
    if posture_name is None:
        settings.MOBKIT_ACCESS_CONFIG = None
    else:
        posture(posture_name)
    store(MIX)
    client = signed_in_client(user_with_subject(subject))

    shown, counts = walk(client, params)

    total = len(shown)
    assert len(set(shown)) == total
    if total == 0:
        assert counts == [None]  # the page says why it is empty instead
        return
    # Each page places its rows in the whole: 1–4, 5–8, … of the total.
    expected = [f"{first}–{min(first + PAGE - 1, total)} of {events(total)}" for first in range(1, total + 1, PAGE)]
    assert counts == expected


@pytest.mark.parametrize(("subject", "receives"), VISIBLE_TO)
def test_each_member_of_the_audience_is_told_how_many_events_it_receives(posture, subject, receives):
    posture("timeline_audience")
    store([(e["identity"], e["event_type"], e["data"]) for e in VISIBILITY_EVENTS.values()])

    page = signed_in_client(user_with_subject(subject)).get(URL).content.decode()

    assert timeline_count(page) == (f"1–{len(receives)} of {events(len(receives))}" if receives else None)


def test_filters_narrow_the_count_and_a_filter_matching_nothing_says_so(client, signed_in):
    signed_in(READER)
    store(MIX)

    def count(**params: str) -> str | None:
        return timeline_count(client.get(URL, params).content.decode())

    luka = sum(1 for identity, _, _ in MIX if identity == "identity:luka")
    assert count() == f"1–{len(MIX)} of {events(len(MIX))}"
    assert count(identity="identity:luka") == f"1–{luka} of {events(luka)}"
    assert count(identity="identity:luka", event_type="memory.budget.denied") == f"1–2 of {events(2)}"
    assert count(event_type="memory.dream.started") == f"1–2 of {events(2)}"
    empty = client.get(URL, {"identity": "identity:nobody"}).content.decode()
    assert timeline_count(empty) is None and "No events match these filters." in empty


def test_past_the_cap_the_page_says_more_than(client, signed_in, small_pages, monkeypatch):
    monkeypatch.setattr(selectors.events_count, "__kwdefaults__", {"before": None, "upto": None, "cap": 5})
    signed_in(READER)
    store([("identity:luka", "memory.harvest.completed", {"promoted": n}) for n in range(8)])
    store([("identity:mira", "memory.harvest.completed", {"promoted": n}) for n in range(3)])

    first = client.get(URL).content.decode()
    older = client.get(URL + timeline_older_href(first)).content.decode()

    assert timeline_count(first) == "1–4 of more than 5 events"
    assert timeline_count(older) == "4 older events of more than 5"
    assert timeline_count(client.get(URL, {"identity": "identity:mira"}).content.decode()) == "1–3 of 3 events"


def test_the_newest_page_counts_up_to_the_event_its_socket_replays_after(client, signed_in):
    signed_in(READER)
    store(MIX[:5])

    page = client.get(URL).content.decode()

    after = re.search(r'ws-connect="/ws/console/timeline/\?after=(console-evt-\d+)"', page).group(1)
    assert after == timeline_event_ids(page)[0]
    assert timeline_count(page) == f"1–5 of {events(5)}"
    store(MIX[5:7])  # these reach the page over its socket, and timeline.js adds them to the count
    assert timeline_count(client.get(URL).content.decode()) == f"1–7 of {events(7)}"


def test_events_logged_before_the_upgrade_are_counted_after_it(client, signed_in):
    signed_in(READER)
    store(MIX)
    # The log as the previous console left it: no keys.
    TimelineEvent.objects.update(visibility_key=None)
    EventVisibilityKey.objects.all().delete()
    assert timeline_count(client.get(URL).content.decode()) is None

    importlib.import_module("mobkit_console.timeline.migrations.0002_visibility_keys").backfill_visibility_keys(
        apps, None)

    assert timeline_count(client.get(URL).content.decode()) == f"1–{len(MIX)} of {events(len(MIX))}"


def test_the_count_stays_right_when_the_prune_drops_events_and_their_keys(client, signed_in, settings, monkeypatch):
    signed_in(READER)
    settings.MOBKIT_TIMELINE_MAX_EVENTS = 3
    monkeypatch.setattr(services, "KEY_IDLE_MS", -1000)  # every unused key is idle long enough
    store([("identity:mira", "memory.harvest.completed", {"promoted": 0})])
    store([("identity:luka", "memory.harvest.completed", {"promoted": n}) for n in range(5)])

    events_prune()

    assert timeline_count(client.get(URL).content.decode()) == f"1–3 of {events(3)}"
    assert timeline_count(client.get(URL, {"identity": "identity:mira"}).content.decode()) is None
    store([("identity:mira", "memory.harvest.completed", {"promoted": 1})])  # mira's key, made again
    assert timeline_count(client.get(URL, {"identity": "identity:mira"}).content.decode()) == f"1–1 of {events(1)}"
    assert timeline_count(client.get(URL).content.decode()) == f"1–4 of {events(4)}"
