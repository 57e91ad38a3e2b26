"""All-realm pages read the realms that hold their rows, not every realm (docs/realm-index.md §10).

Many small realms answer an all-realm records page and the quarantine queue from one console-wide
index of their keys and list rows, without opening a realm file; search opens only the realms of
its results (their bodies make the snippets). Counted
here with Django's own ``connection_created`` signal: each realm read opens its alias once a request
(the test client keeps connections between requests, so ``next_request`` closes them as a served
request's end does).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator

import pytest
from django.db.backends.signals import connection_created

from memory_panel.store.changes import SETTLED_NS
from memory_panel.simulator.store_writer import ManualClock, StoreWriter, agent, identity_scope, new_record
from memory_panel.store.realms import REALM_ALIAS_PREFIX, close_realm_connections
from tests.support.postures import LEAD, ROOT, USER
from tests.support.rpc import panel
from tests.support.worlds import write_notes
from tests.support.written import T0, newest_first

pytestmark = pytest.mark.django_db

REALMS = 24
NOTES = 6


@pytest.fixture
def opened() -> Iterator[list[str]]:
    """The realm aliases opened since the last ``next_request``."""
    names: list[str] = []

    def note(sender, connection, **kwargs):
        if connection.alias.startswith(REALM_ALIAS_PREFIX):
            names.append(connection.alias[len(REALM_ALIAS_PREFIX):])

    connection_created.connect(note)
    yield names
    connection_created.disconnect(note)


def next_request(opened: list[str]) -> None:
    close_realm_connections()
    opened.clear()


@pytest.fixture
def many_realms(agent_memory_dir, signed_in):
    """REALMS small realms whose notes interleave in time, the newest in realm ``r23``."""
    rows = []
    for i in range(REALMS):
        quarantine_one = (lambda n: ("identity", LEAD, n == 0))
        rows += write_notes(agent_memory_dir, f"r{i:02d}", NOTES, start_ms=T0 + i, tie_every=1,
                            pick_scope=quarantine_one)
    signed_in(USER)
    return rows


def test_an_all_realm_records_page_opens_no_realm_file(client, many_realms, opened):
    panel(client, "records", {"limit": 5})  # the first look copies every realm's keys
    next_request(opened)
    result = panel(client, "records", {"limit": 5}).result
    want = newest_first(row for row in many_realms if row.status_kind != "quarantined")[:6]
    assert [row["id"] for row in result["records"]] == [row.id for row in want[:5]]
    assert result["records"] == [row.list_row() for row in want[:5]]
    assert opened == []


def test_a_deep_all_realm_page_costs_what_the_first_does(client, many_realms, opened):
    panel(client, "records", {"limit": 5})
    visible = newest_first(row for row in many_realms if row.status_kind != "quarantined")
    cursor = f"{visible[59].updated_at_ms}:{visible[59].id}"
    next_request(opened)
    result = panel(client, "records", {"limit": 5, "cursor": cursor}).result
    assert [row["id"] for row in result["records"]] == [row.id for row in visible[60:65]]
    assert opened == []


def test_a_realm_written_between_two_pages_is_listed_by_the_next(client, many_realms, agent_memory_dir):
    panel(client, "records", {"limit": 5})
    with StoreWriter.open("r05", root=agent_memory_dir, clock=ManualClock(T0 + 10_000_000)) as writer:
        written = writer.remember(identity_scope("r05", LEAD), "written after the first page", "body")
    first = panel(client, "records", {"limit": 1}).result["records"][0]
    assert (first["id"], first["title"]) == (written, "written after the first page")


def test_a_realm_that_appears_between_two_pages_is_listed_by_the_next(client, many_realms, agent_memory_dir):
    panel(client, "records", {"limit": 5})
    later = write_notes(agent_memory_dir, "late", 1, start_ms=T0 + 10_000_000)
    first = panel(client, "records", {"limit": 1}).result["records"][0]
    assert (first["id"], first["title"]) == (later[0].id, later[0].title)


def test_the_quarantine_queue_across_realms_opens_no_realm_file(client, many_realms, opened, signed_in):
    signed_in(ROOT)
    panel(client, "quarantine", {"limit": 3})
    next_request(opened)
    result = panel(client, "quarantine", {"limit": 3}).result
    queued = sorted((row for row in many_realms if row.status_kind == "quarantined"),
                    key=lambda row: (row.created_at_ms, row.id), reverse=True)
    assert [row["id"] for row in result["records"]] == [row.id for row in queued[:3]]
    assert opened == []


def test_a_search_across_realms_opens_only_the_realms_of_its_results(client, many_realms, opened, agent_memory_dir):
    with StoreWriter.open("r07", root=agent_memory_dir, clock=ManualClock(T0 + 10_000_000)) as writer:
        found = writer.remember(identity_scope("r07", LEAD), "Ferry to Vardø", "the ferry leaves at dawn")
    time.sleep(SETTLED_NS / 1e9 + 0.1)  # a file written within the last second is copied at every look
    panel(client, "search", {"query": "ferry"})  # the first search copies the documents
    next_request(opened)
    result = panel(client, "search", {"query": "ferry"}).result
    assert [row["id"] for row in result["records"]] == [found]
    assert set(opened) == {"r07"}
    assert result["realms"] == sorted({row.realm for row in many_realms})


def test_a_quiet_realms_holdings_are_answered_without_opening_it_and_a_write_is_counted(
    client, many_realms, opened, agent_memory_dir
):
    time.sleep(SETTLED_NS / 1e9 + 0.1)  # quiet: the files' signatures are trusted from here
    first = panel(client, "overview", {}).result
    next_request(opened)
    assert panel(client, "overview", {}).result == first
    assert opened == []  # every realm's counts kept while its file stands still
    with StoreWriter.open("r03", root=agent_memory_dir, clock=ManualClock(T0 + 10_000_000)) as writer:
        writer.remember(identity_scope("r03", LEAD), "one more", "body")
    after = {(s["realm"], s["scope_key"]): s for s in panel(client, "overview", {}).result["scopes"]}
    before = {(s["realm"], s["scope_key"]): s for s in first["scopes"]}
    assert after[("r03", LEAD)]["active"] == before[("r03", LEAD)]["active"] + 1


def test_the_pipeline_across_quiet_realms_opens_none_and_a_new_proposal_is_counted_and_listed(
    client, many_realms, opened, agent_memory_dir, signed_in
):
    signed_in(ROOT)
    time.sleep(SETTLED_NS / 1e9 + 0.1)  # quiet: the files' signatures are trusted from here
    assert client.get("/console/memory/pipeline/").status_code == 200
    next_request(opened)
    assert client.get("/console/memory/pipeline/").status_code == 200
    assert opened == []  # every realm's counts, proposals, verdicts and titles kept, and merged
    before = panel(client, "proposals", {}).result["proposals"]
    with StoreWriter.open("r05", root=agent_memory_dir, clock=ManualClock(T0 + 10_000_000)) as writer:
        proposal = writer.propose(identity_scope("r05", LEAD), new_record(kind="fact", title="Side door", body="x"),
                                  author=agent(LEAD))
    after = panel(client, "proposals", {}).result["proposals"]
    assert [row["proposal_id"] for row in after] == [row["proposal_id"] for row in before] + [proposal]
    page = client.get("/console/memory/pipeline/").content.decode()
    assert "Side door" in page and proposal in page


def test_a_first_fill_of_many_realms_sorts_the_order_indexes_once_after_the_copies(client, many_realms, monkeypatch):
    from memory_panel.store import all_realms_index

    monkeypatch.setattr(all_realms_index, "BULK_REALMS", 2)
    result = panel(client, "records", {"limit": 5}).result
    want = newest_first(row for row in many_realms if row.status_kind != "quarantined")[:5]
    assert [row["id"] for row in result["records"]] == [row.id for row in want]
    with sqlite3.connect(all_realms_index.index_path()) as conn:
        indexes = {name for name, in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"entries_order", "entries_scope_order", "entries_status_order", "entries_created"} <= indexes


def test_a_new_row_threshold_decides_again_which_quiet_realms_are_held(agent_memory_dir, settings):
    from memory_panel.store.all_realms_index import all_realms_index

    def held() -> set[str]:
        return set(all_realms_index(["small", "big"], on_failure=lambda name, error: None).listed)

    write_notes(agent_memory_dir, "small", 2, start_ms=T0)
    write_notes(agent_memory_dir, "big", 8, start_ms=T0)
    time.sleep(SETTLED_NS / 1e9 + 0.1)  # quiet: only the setting can move the decision
    assert held() == {"small", "big"}
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 5
    assert held() == {"small"}
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    assert held() == set()
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 100
    assert held() == {"small", "big"}
