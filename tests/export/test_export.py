"""GET /console/memory/records.csv and .ndjson: every visible row, equal to walking the RPC, streamed."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.db import connections

from memory_panel.simulator.store_writer import identity_scope
from memory_panel.store.realms import realm_alias
from tests.support.rpc import panel
from tests.support.written import new_scribe
from tests.support.grants import GRANTED_POSTURES as POSTURES

pytestmark = pytest.mark.django_db

NDJSON = "/console/memory/records.ndjson"
CSV = "/console/memory/records.csv"


def walk_rpc(client, method: str, params: dict) -> list[dict]:
    rows, cursor = [], None
    for _ in range(100):
        reply = panel(client, method, {**params, "limit": 2, **({"cursor": cursor} if cursor else {})})
        rows += reply.result["records"]
        cursor = reply.result["next_cursor"]
        if cursor is None:
            return rows
    raise AssertionError("the walk never ended")


def download(client, url: str, params: dict) -> bytes:
    response = client.get(url, params)
    assert response.status_code == 200, response
    assert response.streaming
    return b"".join(response.streaming_content)


@pytest.mark.parametrize("name", POSTURES)
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("records", {}),
        ("records", {"status": "quarantined"}),
        ("records", {"realm": "default", "scope": "identity"}),
        ("search", {"query": "scout", "status": "active"}),
        ("search", {"query": "body", "status": "quarantined"}),
    ],
)
def test_ndjson_equals_walking_the_rpc_with_the_same_filters(client, world, posture, name, method, params):
    posture(name)
    rpc = panel(client, method, {**params, "limit": 1})
    if "error" in rpc.body:  # an entry gate: the export refuses the same way
        assert client.get(NDJSON, params).status_code == 403
        return
    page_params = {("q" if k == "query" else k): v for k, v in params.items()}
    lines = download(client, NDJSON, page_params).decode().splitlines()
    assert [json.loads(line) for line in lines] == walk_rpc(client, method, params)


@pytest.mark.parametrize("name", POSTURES)
def test_csv_has_one_line_per_row_of_the_rpc_walk(client, world, posture, name):
    posture(name)
    table = list(csv.DictReader(io.StringIO(download(client, CSV, {}).decode())))
    rows = walk_rpc(client, "records", {})
    assert [line["id"] for line in table] == [row["id"] for row in rows]
    for line, row in zip(table, rows):
        assert line["realm"] == row["scope"]["realm"]
        assert line["status"] == row["status"]["status"]
        assert json.loads(line["tags"]) == row["tags"]
        assert int(line["body_bytes"]) == row["body_bytes"]


def test_cells_a_spreadsheet_would_evaluate_are_neutralised(client, agent_memory_dir, signed_in):
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    hostile = ["=HYPERLINK(\"http://evil\")", "+1+2", "-3", "@SUM(A1)"]
    for title in hostile:
        s.remember(identity_scope("default", "identity:x"), title, "cell body", tags=["=tag"])
    s.writer.close()
    table = list(csv.DictReader(io.StringIO(download(client, CSV, {}).decode())))
    assert sorted(line["title"] for line in table) == sorted("'" + title for title in hostile)
    assert all(not line["title"].startswith(("=", "+", "-", "@")) for line in table)
    assert all(line["tags"] == '["=tag"]' for line in table)  # JSON text starts with "[": left alone
    # The NDJSON rows are the RPC's JSON: text there is data, never a formula, so it is untouched.
    lines = [json.loads(line) for line in download(client, NDJSON, {}).decode().splitlines()]
    assert sorted(row["title"] for row in lines) == sorted(hostile)


@pytest.mark.parametrize("params", [{}, {"q": "separators"}])
def test_line_and_paragraph_separators_are_escaped_so_each_ndjson_row_stays_one_line(
    client, agent_memory_dir, signed_in, params
):
    # Valid raw in JSON, U+2028/U+2029 end a line for JavaScript and for Unicode line readers.
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    # The store writer folds a title's whitespace (U+2028/U+2029 among it); tags keep their text.
    tags = ["separators\u2028inside", "two\u2029paragraphs"]
    s.remember(identity_scope("default", "identity:x"), "separators", "separators body", tags=tags)
    s.writer.close()
    raw = download(client, NDJSON, params)
    assert "\u2028".encode() not in raw and "\u2029".encode() not in raw
    assert b"separators\\u2028inside" in raw and b"two\\u2029paragraphs" in raw
    [row] = [json.loads(line) for line in raw.decode().splitlines()]  # str.splitlines splits at both
    assert row["tags"] == tags


def test_search_export_adds_score_and_snippet_columns(client, world, signed_in):
    signed_in()
    table = list(csv.DictReader(io.StringIO(download(client, CSV, {"q": "scout"}).decode())))
    assert table and all(float(line["score"]) > 0 and "\ue000" in line["snippet"] for line in table)


def test_a_client_that_stops_reading_leaves_no_walk_and_no_connection_open(client, agent_memory_dir, signed_in):
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    for n in range(450):  # three batches of 200
        s.remember(identity_scope("default", "identity:x"), f"Row {n}", "body")
    s.writer.close()
    response = client.get(NDJSON, {"realm": "default"})  # the realm's own rows: read from its file
    chunks = iter(response.streaming_content)
    assert json.loads(next(chunks).split(b"\n", 1)[0])["title"] == "Row 449"  # a piece of many rows
    connection = connections[realm_alias("default")]
    assert connection.connection is not None  # the walk is reading the realm
    response.close()  # what the server does when the client disconnects
    assert connection.connection is None
    assert next(chunks, None) is None  # the generator is finished: nothing left running


def test_bad_filters_fail_before_the_download_starts(client, world, signed_in):
    signed_in()
    response = client.get(NDJSON, {"scope": "galaxy"})
    assert response.status_code == 400 and not response.streaming
    assert "unknown scope" in response.content.decode()
