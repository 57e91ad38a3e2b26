"""The ledger page /console/memory/ledger/ and its health fragment."""

from __future__ import annotations

import pytest

from tests.support.files import assertion, conflict, write_state
from tests.support.postures import SCOUT_ONLY

PAGE = "/console/memory/ledger/"
HOSTILE = '<script>alert("x")</script>'


@pytest.fixture
def hostile_ledger(state_dir):
    write_state(
        state_dir / "memory-ledger-state.json",
        {
            "assertions": [
                assertion(0, "alice", "travel", "vector", f"fact {HOSTILE}", {"note": HOSTILE}),
                assertion(1, "bob", "diet", "todo", "Bob eats fish"),
            ],
            "conflicts": [conflict("alice", "travel", "todo", f"reason {HOSTILE}")],
        },
    )


def test_page_shows_assertions_conflicts_and_escapes_hostile_text(console, hostile_ledger):
    response = console.get(PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<script>alert" not in html
    assert "fact &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "reason &lt;script&gt;" in html
    assert "Bob eats fish" in html
    # the active conflict names the pair it blocks, and the blocked assertion is marked
    assert "blocks <code>alice</code> / <code>travel</code>" in html
    assert html.count('class="ledger-blocked"') == 1


@pytest.mark.parametrize(
    ("query", "shown", "hidden"),
    [
        ("?entity=BOB", ["Bob eats fish"], ["fact &lt;script"]),
        ("?store=vector", ["fact &lt;script"], ["Bob eats fish"]),
        ("?topic=diet", ["Bob eats fish"], ["fact &lt;script"]),
        ("?query=fish", ["Bob eats fish"], ["fact &lt;script", "reason &lt;script"]),
        ("?store=", ["Bob eats fish", "fact &lt;script"], []),
    ],
)
def test_page_filters_by_get_params(console, hostile_ledger, query, shown, hidden):
    html = console.get(PAGE + query).content.decode()
    for text in shown:
        assert text in html
    for text in hidden:
        assert text not in html


def test_invalid_filter_is_a_400_with_the_error_beside_the_form(console, hostile_ledger):
    response = console.get(PAGE + "?store=graph")
    assert response.status_code == 400  # the same convention as every panel page
    assert "Invalid params: store &#x27;graph&#x27; is unsupported" in response.content.decode()


def test_htmx_request_gets_the_results_fragment_only(console, hostile_ledger):
    response = console.get(PAGE + "?entity=bob", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="ledger-results">')
    assert "<html" not in html and "Bob eats fish" in html


def test_corrupt_file_is_an_error_box_not_a_500(console, state_dir):
    (state_dir / "memory-ledger-state.json").write_text("{", encoding="utf-8")
    response = console.get(PAGE)
    assert response.status_code == 503  # the store cannot be read, as for a damaged realm
    html = response.content.decode()
    assert 'class="alert"' in html and "Memory backend unavailable: invalid store data" in html


def test_missing_file_says_the_ledger_is_empty(console, state_dir):
    html = console.get(PAGE).content.decode()
    assert "No state file at" in html and "No assertions" in html


def test_scoped_reader_is_refused(console, hostile_ledger, access_toml):
    access_toml(SCOUT_ONLY)
    response = console.get(PAGE)
    assert response.status_code == 403
    assert "access denied: agent.memory.read" in response.content.decode()
    assert "Bob eats fish" not in response.content.decode()


def test_anonymous_caller_is_sent_to_sign_in(client, db, hostile_ledger):
    assert client.get(PAGE).status_code == 302


def test_health_is_loaded_after_the_page_from_its_fragment(console, hostile_ledger, settings, serve):
    settings.MOBKIT_LEDGER_HEALTH_ENDPOINT = None
    assert "memory/ledger/health/" not in console.get(PAGE).content.decode()

    server = serve(b"HTTP/1.1 200 OK\r\n\r\n")
    settings.MOBKIT_LEDGER_HEALTH_ENDPOINT = f"http://127.0.0.1:{server.port}"
    page = console.get(PAGE).content.decode()
    assert 'hx-get="/console/memory/ledger/health/"' in page and 'hx-trigger="load"' in page
    assert server.requests == []  # the page itself never waits on the endpoint

    fragment = console.get("/console/memory/ledger/health/").content.decode()
    assert "healthy" in fragment and "answered HTTP 200" in fragment


def test_health_fragment_reports_an_unhealthy_endpoint(console, settings, serve):
    server = serve(b"HTTP/1.1 500 Oops\r\n\r\n")
    settings.MOBKIT_LEDGER_HEALTH_ENDPOINT = f"http://127.0.0.1:{server.port}"
    fragment = console.get("/console/memory/ledger/health/").content.decode()
    assert "unhealthy" in fragment
    assert f"healthcheck status failed for &#x27;http://127.0.0.1:{server.port}/v1/health&#x27;: HTTP 500" in fragment
