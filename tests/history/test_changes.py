"""``/console/memory/changes/`` and its NDJSON and CSV: what changed between two moments of the
scripted history, counted, listed in keyset pages, superseded records with their word diff
(docs/history.md §5)."""

from __future__ import annotations

import csv
import html
import io
import json
import re

import pytest

from tests.support.history import Script

pytestmark = pytest.mark.django_db

CHANGES = "/console/memory/changes/"
_ROW = re.compile(r'<tr data-memory-id="([^"]*)" data-change="([^"]*)">')


def listed(page: str) -> list[tuple[str, str]]:
    return [(html.unescape(memory_id), change) for memory_id, change in _ROW.findall(page)]


def ndjson(client, **params) -> list[dict]:
    response = client.get(CHANGES.rstrip("/") + ".ndjson", params)
    assert response.status_code == 200
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]


def test_every_change_of_the_script_in_order(client, signed_in, script: Script):
    signed_in()
    window = {"from": script.before(), "to": script.between("tombstone")}
    rows = ndjson(client, **window)
    assert [(row["change"], row["record"]["id"]) for row in rows] == sorted([
        ("added", script.route_v1),
        ("added", script.route_v2), ("superseded", script.route_v1),
        ("quarantined", script.rumour),
        ("added", script.released), ("released", script.rumour),
        ("tombstoned", script.route_v2),
    ], key=lambda pair: (script_moment(script, pair), pair[1]))
    superseded = next(row for row in rows if row["change"] == "superseded")
    assert superseded["other_id"] == script.route_v2
    assert superseded["diff"] == {"body": [["same", "Take the "], ["removed", "north"], ["added", "south"],
                                           ["same", " ridge first, then the saddle."]]}
    released = next(row for row in rows if row["change"] == "released")
    assert released["other_id"] == script.released and released["status"]["status"] == "tombstoned"


def script_moment(script: Script, pair: tuple[str, str]) -> int:
    change, memory_id = pair
    if memory_id == script.route_v1:
        return script.steps["create" if change == "added" else "supersede"]
    if memory_id == script.route_v2:
        return script.steps["supersede" if change == "added" else "tombstone"]
    if memory_id == script.rumour:
        return script.steps["quarantine" if change == "quarantined" else "release"]
    return script.steps["release"]


def test_a_window_holds_only_its_own_changes_counted(client, signed_in, script: Script):
    signed_in()
    page = client.get(CHANGES, {"from": script.between("supersede"), "to": script.between("release")}).content.decode()
    assert sorted(listed(page)) == sorted([("quarantined", script.rumour)[::-1], (script.released, "added"),
                                           (script.rumour, "released")])
    assert '<span data-kind="added">1 added</span>' in page
    assert '<span data-kind="quarantined">1 quarantined</span>' in page
    assert '<span data-kind="released">1 released</span>' in page
    assert '<span data-kind="superseded">0 superseded</span>' in page


def test_keyset_pages_walk_every_change_once(client, signed_in, script: Script):
    signed_in()
    params = {"from": script.before(), "to": script.between("tombstone"), "limit": "2"}
    seen: list[tuple[str, str]] = []
    page = client.get(CHANGES, params).content.decode()
    while True:
        seen += listed(page)
        more = re.search(r'<a class="button" href="([^"]*cursor[^"]*)"', page)
        if not more:
            break
        page = client.get(CHANGES + html.unescape(more.group(1))).content.decode()
    assert len(seen) == 7 == len(set(seen))


def test_the_superseded_row_shows_its_word_diff_escaped(client, signed_in, script: Script):
    signed_in()
    page = client.get(CHANGES, {"from": script.between("create"), "to": script.between("supersede")}).content.decode()
    assert '<span class="visually-hidden">[removed: </span>north' in page
    assert '<span class="visually-hidden">[added: </span>south' in page


def test_csv_lists_the_same_changes(client, signed_in, script: Script):
    signed_in()
    response = client.get(CHANGES.rstrip("/") + ".csv", {"from": script.before(), "to": script.between("tombstone")})
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == 7
    assert {row["change"] for row in rows} == {"added", "superseded", "quarantined", "released", "tombstoned"}


def test_quarantine_and_release_are_a_reviewers_alone(client, signed_in, posture, script: Script):
    posture("standard")
    signed_in("reader@example.test")
    window = {"from": script.before(), "to": script.between("tombstone")}
    kinds = {row["change"] for row in ndjson(client, **window)}
    assert "quarantined" not in kinds and "released" not in kinds
    signed_in("reviewer@example.test")
    kinds = {row["change"] for row in ndjson(client, **window)}
    assert {"quarantined", "released"} <= kinds


@pytest.mark.parametrize(("params", "message"), [
    ({}, "from and to are both needed"),
    ({"from": "2026-11-02T10:00:00Z"}, "from and to are both needed"),
    ({"from": "soon", "to": "2026-11-02T10:00:00Z"}, "from must be an ISO 8601 date-time"),
    ({"from": "2026-11-02T10:00:00Z", "to": "2026-11-02T09:00:00Z"}, "from must be before to"),
])
def test_a_bad_window_is_a_clear_400(client, signed_in, script: Script, params, message):
    signed_in()
    for url in (CHANGES, CHANGES.rstrip("/") + ".ndjson", CHANGES.rstrip("/") + ".csv"):
        response = client.get(url, params)
        assert response.status_code == 400
        assert message in response.content.decode()
