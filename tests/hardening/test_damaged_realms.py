"""A realm file truncated or overwritten in place is named and skipped, never a 500 (docs/realm-failures.md §1).

Every page and method that spans all realms goes on serving the readable ones and (on HTML) names
the realm it left out; asked for alone, the damaged realm is a 503 page or RPC -32001 naming the
realm and the reason. With and without the console's realm index.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from memory_panel.simulator.store_writer import identity_scope, mob_scope
from memory_panel.store.realms import forget_realm_connections
from tests.hardening.support import (
    PANEL_METHODS,
    HTML_PAGES,
    damage,
    rpc,
)

pytestmark = pytest.mark.django_db

DAMAGE = ("truncated", "halved", "garbage")


@pytest.fixture
def two_realms(realm_writer, index_mode, client_signed_in):
    good, bad = write_good_and_bad(realm_writer)
    # Every page once while both are whole, so the index (when on) exists and is caught up.
    for path in HTML_PAGES:
        assert client_signed_in.get(path).status_code == 200, path
    return good, bad


def write_good_and_bad(realm_writer):
    """Realm ``good`` of one record and realm ``bad`` of 30, each closed."""
    good = realm_writer("good")
    good.remember(identity_scope("good", "identity:luka"), "Good realm fact", "readable body")
    bad = realm_writer("bad")
    for n in range(30):
        bad.remember(mob_scope("bad", "ops"), f"Bad realm fact {n}", "x" * 2000)
    good.close()
    bad.close()
    return good, bad


@pytest.mark.parametrize("how", DAMAGE)
def test_all_realm_pages_serve_the_other_realms_and_name_the_damaged_one(two_realms, client_signed_in, how):
    damage(two_realms[1].path, how)
    for path in HTML_PAGES:
        page = client_signed_in.get(path)
        assert page.status_code == 200, (path, page.status_code)
        text = page.content.decode()
        assert "could not be read" in text and "<code>bad</code>" in text, path
    records = client_signed_in.get("/console/memory/records/").content.decode()
    assert "Good realm fact" in records and "Bad realm fact" not in records


@pytest.mark.parametrize("how", DAMAGE)
def test_all_realm_methods_answer_for_the_other_realms(two_realms, client_signed_in, how):
    damage(two_realms[1].path, how)
    for method in PANEL_METHODS:
        reply = rpc(client_signed_in, method, {})
        assert "result" in reply, (method, reply)
        assert reply["result"].get("realms", ["good"]) == ["good"], method
    rows = rpc(client_signed_in, "mobkit/memory/panel/records", {})["result"]["records"]
    assert [row["title"] for row in rows] == ["Good realm fact"]


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_realm_asked_for_alone_is_a_clear_503_and_rpc_32001(two_realms, client_signed_in, how):
    damage(two_realms[1].path, how)
    for path in HTML_PAGES:
        page = client_signed_in.get(path, {"realm": "bad"})
        assert page.status_code == 503, path
        assert "realm &#x27;bad&#x27; could not be read" in page.content.decode(), path
    for method in PANEL_METHODS:
        error = rpc(client_signed_in, method, {"realm": "bad"})["error"]
        assert error["code"] == -32001, (method, error)
        assert error["data"]["realm"] == "bad" and error["data"]["reason"], method
        assert error["message"].startswith("agent memory panel failed: realm 'bad' could not be read: ")


def test_a_record_of_the_damaged_realm_is_not_found_elsewhere_and_503_there(two_realms, client_signed_in):
    rows = rpc(client_signed_in, "mobkit/memory/panel/records", {"realm": "good"})["result"]["records"]
    damage(two_realms[1].path, "garbage")
    good_id = rows[0]["id"]
    assert client_signed_in.get(f"/console/memory/records/{good_id}/").status_code == 200
    assert rpc(client_signed_in, "mobkit/memory/panel/record", {"memory_id": good_id})["result"]["realm"] == "good"
    assert rpc(client_signed_in, "mobkit/memory/panel/record", {"memory_id": "nope"})["error"]["code"] == -32001
    reply = rpc(client_signed_in, "mobkit/memory/panel/record", {"memory_id": good_id, "realm": "bad"})
    assert reply["error"]["data"]["realm"] == "bad"


def test_the_shell_lists_the_damaged_realm_as_unreadable(two_realms, client_signed_in):
    damage(two_realms[1].path, "garbage")
    shell = client_signed_in.get("/console/")
    assert shell.status_code == 200 and "unreadable" in shell.content.decode()


# All-realm pages whose selectors read every realm their own way (issue: utility sort, Pipeline, Knowledge).
MORE_PAGES = (
    "/console/memory/records/?sort=utility",
    "/console/memory/pipeline/",
    "/console/memory/knowledge/?identity=identity:luka",
)


@pytest.mark.parametrize("how", DAMAGE)
@pytest.mark.parametrize("path", MORE_PAGES)
def test_utility_sort_pipeline_and_knowledge_skip_and_name_the_damaged_realm(two_realms, client_signed_in, how, path):
    damage(two_realms[1].path, how)
    page = client_signed_in.get(path)
    assert page.status_code == 200, (path, page.status_code)
    text = page.content.decode()
    assert "could not be read" in text and "<code>bad</code>" in text, path


def _download(client, url: str, params: dict) -> str:
    response = client.get(url, params)
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


@pytest.mark.parametrize("how", DAMAGE)
def test_an_export_that_left_a_damaged_realm_out_ends_with_an_error_line_naming_it(two_realms, client_signed_in, how):
    damage(two_realms[1].path, how)
    lines = _download(client_signed_in, "/console/memory/records.ndjson", {}).splitlines()
    assert [json.loads(line)["title"] for line in lines[:-1]] == ["Good realm fact"]
    error = json.loads(lines[-1])["error"]
    assert error["realm"] == "bad" and error["reason"]
    assert error["message"] == f"export incomplete: realm 'bad' could not be read: {error['reason']}"
    table = list(csv.reader(io.StringIO(_download(client_signed_in, "/console/memory/records.csv", {}))))
    assert [line[0] for line in table[1:-1]] == [json.loads(lines[0])["id"]]
    assert table[-1] == [f"# {error['message']}"]


def test_an_export_cut_off_by_a_realm_damaged_mid_walk_ends_with_an_error_line(two_realms, client_signed_in, monkeypatch):
    from memory_panel.views import export, streaming

    monkeypatch.setattr(export, "EXPORT_BATCH", 5)  # several pages from a realm of 30 rows
    monkeypatch.setattr(streaming, "PIECE_CHARS", 1)  # one line a piece, so the walk is cut mid-way
    response = client_signed_in.get("/console/memory/records.ndjson", {"realm": "bad"})
    assert response.status_code == 200
    stream = iter(response.streaming_content)
    first = [next(stream) for _ in range(3)]  # the first page is read before the body starts
    damage(two_realms[1].path, "garbage")
    lines = b"".join([*first, *stream]).decode().splitlines()
    rows = [json.loads(line) for line in lines[:-1]]
    assert [row["scope"]["realm"] for row in rows].count("bad") == 5  # the first page, then the error
    assert json.loads(lines[-1])["error"]["realm"] == "bad"


def test_an_export_of_every_realm_is_one_snapshot_of_the_small_realms(realm_writer, client_signed_in, monkeypatch):
    """docs/realm-failures.md §1: their rows come from the console-wide index as the download began
    (realms with an index of their own are read from their files, as alone: the test above)."""
    from memory_panel.views import export, streaming

    _, bad = write_good_and_bad(realm_writer)

    monkeypatch.setattr(export, "EXPORT_BATCH", 5)
    monkeypatch.setattr(streaming, "PIECE_CHARS", 1)
    response = client_signed_in.get("/console/memory/records.ndjson")
    stream = iter(response.streaming_content)
    first = [next(stream) for _ in range(3)]
    damage(bad.path, "garbage")
    rows = [json.loads(line) for line in b"".join([*first, *stream]).decode().splitlines()]
    assert [row["scope"]["realm"] for row in rows].count("bad") == 30 and "error" not in rows[-1]
    assert [row["title"] for row in rows if row["scope"]["realm"] == "good"] == ["Good realm fact"]
    later = rpc(client_signed_in, "mobkit/memory/panel/records", {})["result"]
    assert later["realms"] == ["good"]  # the next request finds the damage and leaves the realm out


@pytest.mark.parametrize("how", DAMAGE)
def test_search_skips_a_damaged_realm_and_names_it_alone_as_records_does(two_realms, client_signed_in, how):
    rpc(client_signed_in, "mobkit/memory/panel/search", {"query": "fact"})  # both search indexes built
    damage(two_realms[1].path, how)
    result = rpc(client_signed_in, "mobkit/memory/panel/search", {"query": "fact"})["result"]
    assert [row["title"] for row in result["records"]] == ["Good realm fact"]
    assert result["realms"] == ["good"]
    page = client_signed_in.get("/console/memory/records/", {"q": "fact"})
    assert page.status_code == 200 and "<code>bad</code>" in page.content.decode()
    for method, params in (("search", {"query": "fact"}), ("records", {})):
        error = rpc(client_signed_in, f"mobkit/memory/panel/{method}", {**params, "realm": "bad"})["error"]
        assert error["code"] == -32001 and error["data"]["realm"] == "bad" and error["data"]["reason"], method
