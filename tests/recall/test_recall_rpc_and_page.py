"""mobkit/memory/panel/recall_preview through POST /console/rpc, and the /console/memory/recall/ page."""

from __future__ import annotations

import pytest

from memory_panel.simulator.store_writer import identity_scope
from tests.support.postures import SCOUT_ONLY

# The mark (not only the db fixture) sets the test database up before the root conftest lets
# realm aliases past its guard.
pytestmark = pytest.mark.django_db

SCOUT = "identity:scout"
LEAD = "identity:lead"
METHOD = "mobkit/memory/panel/recall_preview"
PAGE = "/console/memory/recall/"
HOSTILE = '<script>alert("pwn")</script>'


@pytest.fixture
def realm(realm_writer):
    writer = realm_writer("default")
    for n, identity in enumerate((SCOUT, SCOUT, SCOUT, LEAD)):
        writer.remember(identity_scope("default", identity), f"Kayak trip {n}", f"Paddle {n} {HOSTILE}",
                        id=f"mem-{n}", created_at_ms=1_000 + n, updated_at_ms=1_000 + n)
    return writer


def test_result_shape_over_the_real_endpoint(rpc, realm):
    reply = rpc(METHOD, {"identity": f"  {SCOUT} ", "query_text": "kayak paddle"})
    result = reply["result"]
    assert list(result) == ["realm", "identity", "query_terms", "selected", "injected_block"]
    assert result["realm"] == "default" and result["identity"] == SCOUT
    assert result["query_terms"] == ["kayak", "paddle"]
    # each: kayak title token 4 + paddle body token 2 = 6; newest first
    assert result["selected"] == [
        {"memory_id": f"mem-{n}", "title": f"Kayak trip {n}", "score": 6, "matched_terms": ["kayak", "paddle"]}
        for n in (2, 1, 0)
    ]
    assert "&lt;script&gt;alert(\"pwn\")&lt;/script&gt;" in result["injected_block"]


@pytest.mark.parametrize(
    ("max_entries", "count"),
    [(None, 3), (0, 1), (-4, 3), (2, 2), (100, 3), ("2", 3), (2.5, 3)],
)
def test_max_entries_defaults_and_clamps(rpc, realm, max_entries, count):
    params = {"identity": SCOUT, "query_text": "kayak"}
    if max_entries is not None:
        params["max_entries"] = max_entries
    assert len(rpc(METHOD, params)["result"]["selected"]) == count


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "identity is required"),
        ({"identity": None}, "identity is required"),
        ({"identity": "   "}, "identity is required"),
        ({"identity": 7}, "identity must be a valid non-empty string"),
        ({"identity": "two words"}, "identity must be a valid non-empty string"),
        ({"identity": "a/b"}, "identity must be a valid non-empty string"),
        ({"identity": SCOUT, "query_text": 3}, "query_text must be a string when provided"),
        ({"identity": SCOUT, "query_text": "x" * 16385}, "query_text must be at most 16384 bytes"),
        ({"identity": SCOUT, "realm": "nowhere"}, "unknown realm 'nowhere'"),
        ({"identity": SCOUT, "realm": 5}, "realm must be a string"),
    ],
)
def test_invalid_params(rpc, realm, params, message):
    assert rpc(METHOD, params)["error"] == {"code": -32602, "message": f"Invalid params: {message}", "data": None}


def test_needs_read_and_view_on_that_identity(rpc, realm, access_toml):
    access_toml(SCOUT_ONLY)
    assert [s["memory_id"] for s in rpc(METHOD, {"identity": SCOUT, "query_text": "kayak"})["result"]["selected"]] == [
        "mem-2", "mem-1", "mem-0",
    ]
    assert rpc(METHOD, {"identity": LEAD, "query_text": "kayak"})["error"] == {
        "code": -32030,
        "message": "access denied: agent.memory.read",
        "data": {"kind": "access_denied", "action": "agent.memory.read", "resource": LEAD},
    }


def test_page_form_alone_until_an_identity_is_given(console, realm):
    response = console.get(PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="identity"' in html and 'id="recall-result"' in html and "Injected block" not in html


def test_page_shows_the_preview_with_record_text_escaped(console, realm):
    html = console.get(PAGE, {"identity": SCOUT, "query_text": "kayak", "max_entries": "2"}).content.decode()
    assert "<script>alert" not in html
    assert "Injected block" in html
    assert "Paddle 2 &amp;lt;script&amp;gt;" in html  # the block's own escaping, escaped again for HTML
    assert html.count('<td class="num">4</td>') == 2  # kayak: title token 4; max_entries=2


def test_page_htmx_request_gets_the_result_fragment(console, realm):
    html = console.get(PAGE, {"identity": SCOUT, "query_text": "kayak"}, HTTP_HX_REQUEST="true").content.decode()
    assert html.lstrip().startswith('<div id="recall-result">') and "<html" not in html


def test_page_reports_bad_input_and_denial_in_an_error_box(console, realm, access_toml):
    html = console.get(PAGE, {"identity": "two words"}).content.decode()
    assert 'class="alert"' in html and "identity must be a valid non-empty string" in html
    access_toml(SCOUT_ONLY)
    response = console.get(PAGE, {"identity": LEAD, "query_text": "kayak"})
    assert response.status_code == 403
    assert "access denied: agent.memory.read" in response.content.decode()
    assert "Kayak trip 3" not in response.content.decode()
