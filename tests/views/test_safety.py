"""Every Memory panel page: escaping of hostile record data, CSP, Vary, sign-in, methods."""

from __future__ import annotations

import re

import pytest

from mobkit_console.accounts.tokens import token_issue, user_for_subject
from tests.support.worlds import ATTRIBUTE, HOSTILE, SCRIPT, write_panel_realm

PAGES = (
    "/console/memory/",
    "/console/memory/records/?limit=200",
    "/console/memory/quarantine/",
    "/console/memory/dreams/",
)


@pytest.fixture
def hostile(agent_memory_dir):
    return write_panel_realm(agent_memory_dir, hostile=True)


def hostile_pages(client, realm) -> dict[str, str]:
    urls = [*PAGES, *(f"/console/memory/records/{realm.ids[key]}/" for key in ("seat_v1", "seat_v3", "quarantined"))]
    pages = {}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        pages[url] = response.content.decode()
    return pages


def test_hostile_titles_bodies_tags_identities_and_reasons_are_escaped(client_for, hostile):
    for url, page in hostile_pages(client_for(), hostile).items():
        for raw in HOSTILE:
            assert raw not in page, (url, raw)
        assert "<img" not in page, url
        # The escaped text is there: the data is shown, not dropped.
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page, url


def test_hostile_text_reaches_every_section_escaped(client_for, hostile):
    page = client_for().get(f"/console/memory/records/{hostile.ids['seat_v1']}/").content.decode()
    escaped_attr = "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"

    assert f"Prefers window seats &lt;script&gt;alert(1)&lt;/script&gt; {escaped_attr}</h1>" in page
    assert f"Window seats on short flights. &lt;script&gt;alert(1)&lt;/script&gt; {escaped_attr}" in page
    assert '<span class="chip">&lt;script&gt;alert(1)&lt;/script&gt;</span>' in page  # the tag
    assert "identity identity:luka&lt;script&gt;" in page  # the identity in the scope chip
    assert f"session-1 &lt;script&gt;alert(1)&lt;/script&gt; {escaped_attr}</code>" in page  # evidence


def test_hostile_identity_in_filter_links_is_url_encoded(client_for, hostile):
    page = client_for().get("/console/memory/").content.decode()

    assert "scope_key=identity%3Aluka%3Cscript%3Ealert%281%29%3C%2Fscript%3E" in page


def test_hostile_filter_values_are_escaped_in_the_form(client_for, hostile):
    page = client_for().get("/console/memory/records/", {"identity": ATTRIBUTE}).content.decode()

    assert ATTRIBUTE not in page
    assert 'value="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"' in page


def test_no_inline_scripts_or_styles_on_any_page(client_for, hostile):
    for url, page in hostile_pages(client_for(), hostile).items():
        assert " style=" not in page, url
        assert "<style" not in page, url
        for tag in re.findall(r"<script[^>]*>", page):
            assert " src=" in tag, (url, tag)


@pytest.mark.parametrize("url", [*PAGES, "/console/memory/records/mem-x/"])
def test_csp_header_forbids_inline_script(client_for, hostile, url):
    response = client_for().get(url)
    policy = response["Content-Security-Policy"]

    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "unsafe-inline" not in policy


@pytest.mark.parametrize("url", [*PAGES, "/console/memory/records/mem-x/", "/console/memory/records/?cursor=bad"])
def test_responses_vary_on_hx_request(client_for, hostile, url):
    response = client_for().get(url)

    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize("url", [*PAGES, "/console/memory/records/mem-x/"])
def test_anonymous_caller_is_sent_to_sign_in(client, hostile, url):
    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/console/login/?next=")


def test_pages_answer_get_only(client_for, hostile):
    response = client_for().post("/console/memory/records/")

    assert response.status_code == 405


def test_bearer_token_caller_reads_the_page(hostile, realm_aliases_allowed, client):
    token = token_issue(user=user_for_subject("robot@example.test"))
    response = client.get("/console/memory/records/", HTTP_AUTHORIZATION=f"Bearer {token}")

    assert response.status_code == 200
    assert SCRIPT not in response.content.decode()
