"""``?as_of=`` on Records, a record's page, Holdings and Knowledge: at each step of a scripted
history the pages show exactly what was true then (docs/history.md §4)."""

from __future__ import annotations

import html
import re
import sqlite3
from urllib.parse import unquote

import pytest

from tests.support.history import (
    LUKA, REALM, Script, block_ids, current_step, holdings_cells, iso_ms, row_statuses, status_then,
)

pytestmark = pytest.mark.django_db

RECORDS = "/console/memory/records/"


def statuses(client, as_of: str) -> dict[str, str]:
    response = client.get(RECORDS, {"as_of": as_of})
    assert response.status_code == 200, response.content.decode()[:500]
    return row_statuses(response.content.decode())


def test_records_at_each_step_show_what_was_true_then(client, signed_in, script: Script):
    signed_in()
    v1, v2, rumour, released = script.route_v1, script.route_v2, script.rumour, script.released
    assert statuses(client, script.before()) == {}
    assert statuses(client, script.between("create")) == {v1: "active"}
    assert statuses(client, script.between("supersede")) == {v1: "superseded", v2: "active"}
    assert statuses(client, script.between("quarantine")) == {v1: "superseded", v2: "active", rumour: "quarantined"}
    assert statuses(client, script.between("release")) == {
        v1: "superseded", v2: "active", rumour: "tombstoned", released: "active"}
    assert statuses(client, script.between("tombstone")) == {
        v1: "superseded", v2: "tombstoned", rumour: "tombstoned", released: "active"}


def test_a_status_filter_and_keyset_pages_walk_the_moment(client, signed_in, script: Script):
    signed_in()
    page = client.get(RECORDS, {"as_of": script.between("release"), "status": "active", "limit": 1}).content.decode()
    assert list(row_statuses(page)) == [script.released]  # the newest change first
    assert "2 records then: " in page
    more = html.unescape(re.search(r'<a class="button" href="([^"]*cursor[^"]*)"', page).group(1))
    page = client.get(RECORDS + more).content.decode()
    assert list(row_statuses(page)) == [script.route_v2]
    assert "cursor=" not in page


def test_a_record_page_names_the_version_current_then(client, signed_in, script: Script):
    signed_in()
    url = f"/console/memory/records/{script.route_v1}/"
    page = client.get(url, {"as_of": script.between("create"), "realm": REALM}).content.decode()
    assert status_then(page) == "active"
    assert current_step(page) == script.route_v1
    assert block_ids(page, "as-of-lineage") == [script.route_v1]

    page = client.get(url, {"as_of": script.between("supersede"), "realm": REALM}).content.decode()
    assert status_then(page) == "superseded"
    assert current_step(page) == script.route_v2
    assert block_ids(page, "as-of-lineage") == [script.route_v1, script.route_v2]

    page = client.get(url, {"as_of": script.between("tombstone"), "realm": REALM}).content.decode()
    # The newest version was tombstoned: none was active, the newest that existed is named.
    assert current_step(page) == script.route_v2

    page = client.get(f"/console/memory/records/{script.released}/",
                      {"as_of": script.between("quarantine")}).content.decode()
    assert status_then(page) == "" and "Not written yet" in page


def test_holdings_and_knowledge_count_what_stood_then(client, signed_in, script: Script):
    signed_in()
    page = client.get("/console/memory/", {"as_of": script.between("quarantine")}).content.decode()
    assert holdings_cells(page, REALM, "identity", LUKA)[1:] == ["1", "1", "1", "0"]
    page = client.get("/console/memory/", {"as_of": script.between("tombstone")}).content.decode()
    assert holdings_cells(page, REALM, "identity", LUKA)[1:] == ["1", "0", "1", "2"]
    page = client.get("/console/memory/knowledge/", {"as_of": script.between("release"), "identity": LUKA}).content.decode()
    assert set(block_ids(page, "as-of-known")) == {script.route_v2, script.released}


def test_every_page_says_as_of_and_its_links_keep_it(client, signed_in, script: Script):
    signed_in()
    moment = script.between("supersede")
    for url in (RECORDS, "/console/memory/", "/console/memory/knowledge/", f"/console/memory/records/{script.route_v1}/"):
        page = client.get(url, {"as_of": moment}).content.decode()
        assert re.search(r'id="as-of-banner">Showing the realm <strong>as of ' + re.escape(moment), page)
        for tab in ("Holdings", "Records", "Knowledge"):
            assert re.search(r'<a href="[^"]*\?as_of=[^"]*"[^>]*>' + tab + "</a>", page), (url, tab)
    page = client.get(RECORDS, {"as_of": moment}).content.decode()
    links = re.findall(r'<td><a href="([^"]*)">', page)
    assert links and all("as_of=" in link for link in links)


def test_a_quarantined_record_then_is_a_reviewers_alone(client, signed_in, posture, script: Script):
    posture("standard")
    signed_in("reader@example.test")
    assert script.rumour not in statuses(client, script.between("quarantine"))
    assert client.get(f"/console/memory/records/{script.rumour}/",
                      {"as_of": script.between("quarantine")}).status_code == 403
    signed_in("reviewer@example.test")
    assert statuses(client, script.between("quarantine"))[script.rumour] == "quarantined"


@pytest.mark.parametrize("bad", ["yesterday", "2026-11-02", "2026-13-40T25:00:00Z", "  x  "])
def test_a_bad_moment_is_a_clear_400(client, signed_in, script: Script, bad):
    signed_in()
    for url in (RECORDS, "/console/memory/", "/console/memory/knowledge/", f"/console/memory/records/{script.route_v1}/"):
        response = client.get(url, {"as_of": bad})
        assert response.status_code == 400
        assert "as_of must be an ISO 8601 date-time" in response.content.decode()


def test_a_realm_whose_audit_rows_are_missing_says_so(client, signed_in, script: Script, agent_memory_dir):
    signed_in()
    conn = sqlite3.connect(agent_memory_dir / "default.sqlite3")
    with conn:
        conn.execute("DELETE FROM audit WHERE op_kind = 'tombstone'")
    conn.close()
    response = client.get(RECORDS, {"as_of": script.between("create")})
    assert response.status_code == 409
    assert "cannot be reconstructed" in response.content.decode()


def test_anonymous_callers_get_no_moment(client, script: Script):
    response = client.get(RECORDS, {"as_of": script.between("create")})
    assert response.status_code == 302


def test_each_timeline_event_links_to_the_realm_at_its_moment(client, signed_in, script: Script, settings):
    from mobkit_console.timeline.watcher import RealmWatcher

    settings.MOBKIT_TIMELINE_BACKFILL_DAYS = 3650  # the script is dated, however long ago that is now
    signed_in()
    watcher = RealmWatcher(broadcast=lambda rows: None)
    watcher.poll_once()  # the script's history goes on the timeline (docs/history.md §1)
    watcher.close()
    page = client.get("/console/timeline/").content.decode()
    links = [html.unescape(href) for href in re.findall(r'<a class="timeline-event__at" href="([^"]*)"', page)]
    assert len(links) == 5  # one per event: remembered, updated, quarantined, verdict, forgotten
    at_supersede = next(link for link in links if iso_ms(script.steps["supersede"]) in unquote(link))
    assert row_statuses(client.get(at_supersede).content.decode()) == {
        script.route_v1: "superseded", script.route_v2: "active"}


def test_recall_preview_at_a_moment_chooses_from_the_records_active_then(client, signed_in, script: Script):
    signed_in()
    query = {"identity": LUKA, "query_text": "summit ridge"}

    def recalled(as_of: str) -> set[str]:
        response = client.get("/console/memory/recall/", {**query, "as_of": as_of})
        assert response.status_code == 200
        page = response.content.decode()
        assert 'name="as_of"' in page  # the form keeps the moment
        ids = {script.route_v1, script.route_v2, script.rumour, script.released}
        return {memory_id for memory_id in ids if f'title="{memory_id}"' in page}

    assert recalled(script.before()) == set()
    assert recalled(script.between("create")) == {script.route_v1}
    assert recalled(script.between("supersede")) == {script.route_v2}
    assert recalled(script.between("quarantine")) == {script.route_v2}  # a quarantined write is never recalled
    assert recalled(script.between("release")) == {script.route_v2, script.released}
    assert recalled(script.between("tombstone")) == {script.released}
    assert client.get("/console/memory/recall/", {**query, "as_of": "yesterday"}).status_code == 400
