"""The Records page's author filter (docs/search.md §5, docs/realm-index.md §11) on every read path.

Each path — a small realm read directly, a large one through its realm index, all realms through
the console-wide index, and a search — must return, under each access posture, exactly the rows of
that author kind a walk of every row returns, each once while paging by cursor; the facets under the
filter count exactly those rows. The world adds a realm whose records each author kind wrote,
one of them with a hand-edited provenance naming no author ("unknown") and one naming an author
no MobKit build writes.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from access.caller import Access, access_for, caller_for_user
from memory_panel.errors import AccessDenied
from memory_panel.search_text import parse_query
from memory_panel.selectors.record_utility import record_list_by_utility
from memory_panel.selectors.records import record_list
from memory_panel.selectors.search import record_search
from memory_panel.simulator.store_writer import identity_scope, mob_scope
from memory_panel.store.realm_index import build, realm_index
from memory_panel.store.records import AUTHOR_KINDS
from memory_panel.views.memory import records_query
from tests.support.grants import GRANTED_POSTURES as POSTURES
from tests.support.postures import CALLERS, SCOUT
from tests.support.rpc import panel
from tests.support.worlds import build_world
from tests.support.written import T0, new_scribe

pytestmark = pytest.mark.django_db

FACETS_URL = "/console/memory/records/facets.json"
RECORDS_URL = "/console/memory/records/"
PAGE = 3  # small pages, so every walk crosses many cursors
QUERY = "note"


@pytest.fixture(scope="module")
def world_files(tmp_path_factory):
    """The RPC world, plus a realm "authors" holding records of every author kind."""
    world = build_world(tmp_path_factory.mktemp("world") / "agent-memory")
    scribe = new_scribe(world.root, "authors", start_ms=T0 + 900)
    scout, ops = identity_scope("authors", SCOUT), mob_scope("authors", "ops")
    for n in range(4):
        scribe.remember(scout, f"Operator note {n}", "Set by the operator", author={"author": "operator"})
        scribe.remember(ops, f"Application note {n}", "Set by the app", author={"author": "application"})
        scribe.remember(scout, f"Scout note {n}", "Seen by the scout", author={"author": "agent", "identity": SCOUT})
    hand_edited = {
        "Operator note 1": '{"evidence":[]}',  # no author: "unknown", as the record's page reads it
        "Operator note 2": "not json",
        "Application note 3": '{"evidence":[],"author":{"author":"robot"}}',  # no filter asks for it
    }
    scribe.writer.close()
    with sqlite3.connect(_realm_file(world.root, "authors")) as conn:
        conn.executemany("UPDATE records SET provenance = ? WHERE title = ?",
                         [(value, title) for title, value in hand_edited.items()])
    return world


def _realm_file(root: Path, realm: str) -> Path:
    (path,) = [p for p in root.rglob("*.sqlite*") if realm in p.name and not p.name.endswith(("-wal", "-shm"))]
    return path


@pytest.fixture(params=["small", "large", "all", "all-large"])
def read_path(request, settings, world) -> str | None:
    """The realm asked for, read as the param names: ``large`` lowers MOBKIT_REALM_INDEX_MIN_ROWS so
    the realm's index answers; ``all`` reads the console-wide index of small realms, ``all-large``
    every realm's own index."""
    if request.param in ("large", "all-large"):
        settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
        settings.MOBKIT_REALM_INDEX_BACKGROUND = False
        for realm in ("authors", "default", "other"):
            build(realm)
            assert realm_index(realm) is not None
    return "authors" if request.param in ("small", "large") else None


def caller_access(name: str, django_user_model):
    user = django_user_model.objects.get(username=CALLERS[name][1])
    return access_for(caller_for_user(user, sign_in="session"))


def walk(read, access, realm, params: dict, **kwargs) -> list:
    """Every row a reader pages out for ``params`` (as the Records page reads them), by cursor."""
    filters = records_query(params, access=access, realm=realm).filters
    rows, cursor = [], None
    while True:
        page = read(access=access, realm=realm, filters=filters, limit=PAGE, cursor=cursor, **kwargs)
        rows += page.records
        if page.next_cursor is None:
            return rows
        cursor = page.next_cursor


def keys(rows: list) -> list[tuple[str, str]]:
    return [(row.realm, row.id) for row in rows]


def of_author(rows: list, kind: str) -> list:
    return [row for row in rows if row.author.get("author") == kind]


@pytest.mark.parametrize("name", POSTURES)
def test_the_author_filter_lists_exactly_that_author_kinds_rows(world, posture, name, django_user_model, read_path):
    posture(name)
    access = caller_access(name, django_user_model)
    readers = [
        (record_list, {}, {}),
        (record_list_by_utility, {"sort": "utility"}, {}),
        (record_search, {"q": QUERY}, {"query": parse_query(QUERY)}),
    ]
    for read, params, kwargs in readers:
        try:
            every = walk(read, access, read_path, params, **kwargs)
        except AccessDenied:
            continue  # the list refuses this caller whatever the filter (tests/search/test_facets.py)
        assert len(set(keys(every))) == len(every)
        seen = Counter(row.author.get("author") for row in every)
        for kind in AUTHOR_KINDS:
            filtered = walk(read, access, read_path, {**params, "author": kind}, **kwargs)
            assert keys(filtered) == keys(of_author(every, kind)), (read.__name__, kind)
        assert sum(seen[kind] for kind in AUTHOR_KINDS) + seen["robot"] == len(every)
    if name == "open" and read_path == "authors":
        assert {"operator", "application", "agent", "unknown", "robot"} <= set(seen)


@pytest.mark.parametrize("name", POSTURES)
def test_facet_counts_under_the_author_filter_equal_the_rows_listed(
    client, world, posture, name, django_user_model, read_path
):
    posture(name)
    access = caller_access(name, django_user_model)
    realm = {"realm": read_path or ""}
    for params in ({}, {"q": QUERY}, {"status": "active"}):
        for kind in AUTHOR_KINDS:
            asked = {**params, "author": kind}
            response = client.get(FACETS_URL, {**asked, **realm})
            if response.status_code == 403:
                continue
            assert response.status_code == 200, response.content[:300]
            reply = response.json()
            assert reply["timed_out"] == []
            if "q" in params:
                rows = walk(record_search, access, read_path, asked, query=parse_query(QUERY))
            else:
                rows = walk(record_list, access, read_path, asked)
            counted = {field: Counter({item["value"]: item["count"] for item in items})
                       for field, items in reply["facets"].items()}
            assert counted["author"] == (Counter({kind: len(rows)}) if rows else Counter()), asked
            assert counted["status"] == Counter(row.status for row in rows), asked
            assert counted["realm"] == Counter(row.realm for row in rows), asked


@pytest.mark.parametrize("url", [RECORDS_URL, FACETS_URL, "/console/memory/records/facets.html",
                                 "/console/memory/records.csv"])
def test_a_bad_author_is_a_clear_400(client, world, signed_in, url):
    signed_in()
    response = client.get(url, {"author": "robot"})
    assert response.status_code == 400
    text = response.content.decode()
    assert "unknown author &#x27;robot&#x27;" in text or "unknown author 'robot'" in text
    assert "operator, application, agent, steward, distiller, unknown" in text
    assert "Invalid params: Invalid params" not in text


def test_the_rpc_keeps_mobkits_params_an_author_changes_nothing(client, world, signed_in):
    signed_in()
    plain = panel(client, "records", {"limit": 100})
    assert panel(client, "records", {"limit": 100, "author": "operator"}).body == plain.body
    assert panel(client, "records", {"limit": 100, "author": "robot"}).body == plain.body


def test_the_facet_links_add_and_remove_the_author_filter(client, world, signed_in):
    signed_in()
    block = client.get("/console/memory/records/facets.html", {"status": "active"}).content.decode()
    assert 'href="/console/memory/records/?status=active&amp;author=operator"' in block
    assert "author=robot" not in block  # counted, but no filter can ask for it
    assert '<span class="facet__value">robot</span>' in block
    chosen = client.get("/console/memory/records/facets.html", {"status": "active", "author": "operator"})
    chosen = chosen.content.decode()
    assert 'href="/console/memory/records/?status=active" data-facet="author" aria-current="true"' in chosen
    page = client.get(RECORDS_URL, {"status": "active", "author": "operator"}).content.decode()
    assert 'hx-get="/console/memory/records/facets.html?status=active&amp;author=operator"' in page
    assert '<option value="operator" selected>' in page
    listed = client.get(FACETS_URL, {"status": "active", "author": "operator"}).json()["facets"]["author"]
    assert page.count('class="record-row') == listed[0]["count"] >= 2  # operator notes 0 and 3 at least


def test_the_realm_facet_links_choose_a_realm_and_back_to_all(client, world, signed_in):
    signed_in()
    block = client.get("/console/memory/records/facets.html", {"kind": "fact"}).content.decode()
    assert 'href="/console/memory/records/?kind=fact&amp;realm=authors" data-facet="realm"' in block
    # The switcher's choice is "authors": the chosen realm's link asks for all realms, this page only.
    client.post("/console/memory/realm/", {"realm": "authors", "next": RECORDS_URL})
    block = client.get("/console/memory/records/facets.html", {"kind": "fact"}).content.decode()
    assert 'href="/console/memory/records/?kind=fact&amp;realm=" data-facet="realm" aria-current="true"' in block
    page = client.get(RECORDS_URL, {"kind": "fact", "realm": ""})
    assert page.status_code == 200  # not sent back to the choice
    html = page.content.decode()
    assert 'hx-get="/console/memory/records/facets.html?kind=fact&amp;realm="' in html
    assert "Scout in other realm" in html or "Lead owns the budget" in html


def test_the_indexes_keep_the_author_kind_as_they_catch_up(signed_in, agent_memory_dir, settings):
    """A write after the indexes were built (a new record, a supersede by another author) is filtered
    by its own author kind on the realm index and the console-wide index alike."""
    signed_in()
    open_access = Access(subject="ops", groups=frozenset(), enforced=False, is_admin=False)
    scribe = new_scribe(agent_memory_dir, "caught", start_ms=T0)
    scope = identity_scope("caught", SCOUT)
    first = scribe.remember(scope, "first", "first body", author={"author": "application"})
    assert keys(walk(record_list, open_access, None, {"author": "operator"})) == []  # copied into the shared index
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    build("caught")
    scribe.remember(scope, "second", "second body", author={"author": "operator"})
    scribe.supersede(first, "first v2", "first body again", author={"author": "operator"})
    by_index = walk(record_list, open_access, "caught", {"author": "operator"})
    assert realm_index("caught") is not None
    assert [row.title for row in by_index] == ["first v2", "second"]
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 1_000  # held by the console-wide index again
    assert [row.title for row in walk(record_list, open_access, None, {"author": "operator"})] == ["first v2", "second"]
    assert [row.title for row in walk(record_list, open_access, None, {"author": "application"})] == ["first"]
    scribe.writer.close()


def test_an_export_under_the_author_filter_holds_exactly_that_author_kinds_rows(client, world, signed_in):
    signed_in()
    open_access = Access(subject="ops", groups=frozenset(), enforced=False, is_admin=False)
    every = walk(record_list, open_access, None, {})
    for kind in ("operator", "unknown"):
        lines = client.get("/console/memory/records.ndjson", {"author": kind}).getvalue().decode().splitlines()
        exported = [row["id"] for row in map(json.loads, lines)]
        assert exported == [row.id for row in of_author(every, kind)] and exported, kind
