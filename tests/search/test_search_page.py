"""The Records page's search box (?q=): combined filters, highlighted matches, counts, load more."""

from __future__ import annotations

import re

import pytest

from tests.support.html import more_href, row_ids
from tests.support.worlds import LUKA_FACTS, SCRIPT, write_panel_realm

pytestmark = pytest.mark.django_db

URL = "/console/memory/records/"
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def realm(agent_memory_dir, signed_in):
    signed_in()
    return write_panel_realm(agent_memory_dir, hostile=True)


def test_search_lists_matching_rows_with_matches_marked_after_escaping(client, realm):
    page = client.get(URL, {"q": "luka fact"}).content.decode()
    assert len(row_ids(page)) == LUKA_FACTS
    assert "<mark>Luka</mark> <mark>fact</mark>" in page
    assert SCRIPT not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert f"1–{LUKA_FACTS} of {LUKA_FACTS} matching" in page


def test_search_combines_with_the_other_filters(client, realm):
    both = row_ids(client.get(URL, {"q": "seats", "status": "superseded"}).content.decode())
    assert set(both) == {realm.ids["seat_v1"], realm.ids["seat_v2"]}
    none = row_ids(client.get(URL, {"q": "seats", "scope": "mob"}).content.decode())
    assert none == []


def test_search_pages_with_load_more_until_every_match_was_shown_once(client, realm):
    seen: list[str] = []
    page = client.get(URL, {"q": "luka", "limit": "5"}).content.decode()
    seen += row_ids(page)
    assert f"1–5 of {LUKA_FACTS}" in page  # "Luka fact NN" titles; Luka's other rows never say luka
    for _ in range(20):
        href = more_href(page)
        if href is None:
            break
        page = client.get(URL + href, **HX).content.decode()
        assert "<table" not in page  # rows only, appended in place
        seen += row_ids(page)
    assert len(seen) == len(set(seen))
    total = int(re.search(r"of (\d+) matching", client.get(URL, {"q": "luka"}).content.decode()).group(1))
    assert len(seen) == total


def test_a_bad_query_is_a_clear_400_page(client, realm):
    response = client.get(URL, {"q": '"unclosed'})
    assert response.status_code == 400
    assert "unclosed quote" in response.content.decode()


def test_records_without_a_query_are_counted_too(client, realm):
    page = client.get(URL, {"identity": "identity:ana"}).content.decode()
    assert "1–4 of 4" in page


def test_the_page_links_both_exports_with_the_current_filters(client, realm):
    page = client.get(URL, {"q": "luka", "kind": "fact"}).content.decode()
    assert 'href="/console/memory/records.csv?kind=fact&amp;q=luka"' in page
    assert 'href="/console/memory/records.ndjson?kind=fact&amp;q=luka"' in page
