"""Facets on Records (docs/realm-index.md §11): each count is the rows a walk of the same filter returns.

The walk is ``record_list`` page by page, the Records list's own reader, under each access posture
of tests/support/postures.py; the grant table (tests/support/grants.py) says what each may see, so
a facet that counted a hidden row would show there too.
"""

from __future__ import annotations

from collections import Counter

import pytest

from access.caller import access_for, caller_for_user
from memory_panel.errors import AccessDenied
from memory_panel.selectors.records import record_list
from memory_panel.views.memory import records_query
from memory_panel.simulator.store_writer import identity_scope
from memory_panel.store.record_filter import RecordFilter
from tests.support.grants import GRANTED_POSTURES as POSTURES, GRANTS
from tests.support.postures import CALLERS
from tests.support.worlds import write_spread
from tests.support.written import T0, new_scribe

pytestmark = pytest.mark.django_db

FACETS_URL = "/console/memory/records/facets.json"
FILTERS = (
    {}, {"status": "active"}, {"scope": "identity"}, {"trust": "agent_observed"}, {"kind": "fact"},
    {"identity": "identity:scout"}, {"scope": "mob", "status": "active"}, {"status": "quarantined"},
)


def walk(access, filters: RecordFilter) -> list:
    rows, cursor = [], None
    while True:
        page = record_list(access=access, realm=None, filters=filters, limit=200, cursor=cursor)
        rows += page.records
        if page.next_cursor is None:
            return rows
        cursor = page.next_cursor


def walked_facets(rows: list) -> dict[str, Counter]:
    return {
        "status": Counter(r.status for r in rows),
        "kind": Counter(r.kind for r in rows),
        "scope_kind": Counter(r.scope_kind for r in rows),
        "trust": Counter(r.trust for r in rows),
        "author": Counter(r.author.get("author") for r in rows),
        "realm": Counter(r.realm for r in rows),
    }


def as_counters(reply: dict) -> dict[str, Counter]:
    return {name: Counter({item["value"]: item["count"] for item in items}) for name, items in reply["facets"].items()}


def caller_access(name: str, django_user_model):
    user = django_user_model.objects.get(username=CALLERS[name][1])
    return access_for(caller_for_user(user, sign_in="session"))


@pytest.fixture(params=["shared", "own"])
def counters(request, settings) -> str:
    """Where the counters are: the console-wide index of small realms, or each realm's own search
    index (every realm "large": ``MOBKIT_REALM_INDEX_MIN_ROWS`` 0, its indexes built inline)."""
    if request.param == "own":
        settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
        settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    return request.param


@pytest.mark.parametrize("name", POSTURES)
def test_facet_counts_equal_a_walk_of_the_same_filter(client, world, posture, name, django_user_model, counters):
    posture(name)
    access = caller_access(name, django_user_model)
    for params in FILTERS:
        response = client.get(FACETS_URL, params)
        if response.status_code == 403:  # an entry gate: the list refuses the same filter
            assert response.json()["action"]
            with pytest.raises(AccessDenied):
                walk(access, records_query(params, access=access, realm=None).filters)
            continue
        assert response.status_code == 200, (params, response.content[:300])
        reply = response.json()
        assert reply["timed_out"] == []
        filters = records_query(params, access=access, realm=None).filters  # as the Records page reads them
        assert as_counters(reply) == walked_facets(walk(access, filters)), params


@pytest.mark.parametrize("name", POSTURES)
def test_a_facet_never_counts_a_hidden_row(client, world, posture, name, counters):
    posture(name)
    grants = GRANTS[name]
    visible = [row for row in world.rows.values() if grants.sees(row)]
    reply = client.get(FACETS_URL).json()
    counted = sum(item["count"] for item in reply["facets"]["status"])
    assert counted == len(visible)
    if len(visible) < len(world.rows):
        assert counted < len(world.rows)
    hidden_kinds = {row.scope_kind for row in world.rows.values()} - {row.scope_kind for row in visible}
    assert not hidden_kinds & {item["value"] for item in reply["facets"]["scope_kind"]}
    if counters == "own":
        assert (world.root.parent / "console" / "search-index" / "default").is_dir()


def test_a_search_counts_its_matches(client, world, signed_in, counters):
    signed_in()
    reply = client.get(FACETS_URL, {"q": "scout"}).json()
    assert reply["timed_out"] == []
    assert sum(item["count"] for item in reply["facets"]["status"]) == client.get(
        "/console/memory/records/", {"q": "scout", "limit": 500}
    ).content.count(b'class="record-row')


def test_a_search_past_the_time_limit_says_timed_out_instead_of_a_number(client, world, signed_in, settings):
    signed_in()
    settings.MOBKIT_FACETS_TIMEOUT_MS = 0
    reply = client.get(FACETS_URL, {"q": "the"}).json()
    assert reply["timed_out"] == ["status", "kind", "scope_kind", "trust", "author", "realm"]
    assert all(items == [] for items in reply["facets"].values())
    page = client.get("/console/memory/records/facets.html", {"q": "the"}).content.decode()
    assert page.count("timed out") == 6
    # Without a search the counters answer, time limit or not.
    assert client.get(FACETS_URL).json()["timed_out"] == []


def test_a_search_interrupted_mid_count_says_timed_out(client, signed_in, agent_memory_dir, settings):
    signed_in()
    write_spread(agent_memory_dir, "wide", 15_000, 40)  # below the realm index threshold: searched at once
    assert client.get(FACETS_URL, {"q": "agent noted"}).json()["timed_out"] == []
    settings.MOBKIT_FACETS_TIMEOUT_MS = 1
    reply = client.get(FACETS_URL, {"q": "agent noted"}).json()
    assert reply["timed_out"] == ["status", "kind", "scope_kind", "trust", "author", "realm"]


def test_counters_follow_the_realm_as_the_index_catches_up(client, signed_in, agent_memory_dir, counters):
    signed_in()
    scribe = new_scribe(agent_memory_dir, "facets", start_ms=T0)
    scope = identity_scope("facets", "identity:scout")
    first = scribe.remember(scope, "first", "first body", author={"author": "application"})
    assert as_counters(client.get(FACETS_URL).json())["status"] == Counter({"active": 1})
    scribe.remember(scope, "second", "second body", author={"author": "operator"})
    scribe.forget(first)
    counts = as_counters(client.get(FACETS_URL).json())
    assert counts["status"] == Counter({"active": 1, "tombstoned": 1})
    assert counts["author"] == Counter({"application": 1, "operator": 1})
    scribe.writer.close()


def test_bad_filters_are_a_clear_400(client, world, signed_in):
    signed_in()
    response = client.get(FACETS_URL, {"status": "nonsense"})
    assert response.status_code == 400
    assert "status" in response.json()["error"]


def test_the_records_page_loads_its_facets_beside_the_list(client, world, signed_in):
    signed_in()
    page = client.get("/console/memory/records/", {"status": "active"}).content.decode()
    assert 'hx-get="/console/memory/records/facets.html?status=active"' in page
    block = client.get("/console/memory/records/facets.html", {"status": "active"}).content.decode()
    assert 'href="/console/memory/records/"' in block  # the chosen status: its link removes the filter
    assert "status=active&amp;kind=" in block  # another value: its link adds to the filter
