"""GET /console/memory/records/: filters, keyset "load more", fragments, empty and error states."""

from __future__ import annotations

import pytest

from tests.support.html import more_href, row_ids
from tests.support.postures import NO_OPERATOR, SCOUT_READER
from tests.support.worlds import ANA_PROCEDURES, LUKA_FACTS, MOB_GOTCHAS

URL = "/console/memory/records/"
HX = {"HTTP_HX_REQUEST": "true"}
# write_panel_realm: 23 luka facts + 3-chain + claimant; ana 4; mira 1 (quarantined); ops 3 + 1
# steward-created; oncall 1; realm 1.
ALL_RECORDS = LUKA_FACTS + 4 + ANA_PROCEDURES + 1 + MOB_GOTCHAS + 1 + 1 + 1


@pytest.fixture
def client(client_for):
    return client_for()


def test_lists_every_record_newest_first_with_human_age_and_size(client, realm):
    page = client.get(URL, {"limit": "200"}).content.decode()

    ids = row_ids(page)
    assert len(ids) == ALL_RECORDS
    # By recency, newest first across scopes (docs/daily-use.md §9): the steward's create is the newest write.
    assert ids[0] == realm.ids["dream_created"] and 'data-group="' not in page
    assert '<time datetime="' in page and 'title="2026-01-01 ' in page
    assert " B</td>" in page


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"scope": "mob"}, MOB_GOTCHAS + 1),
        ({"scope": "operator"}, 1),
        ({"scope": "realm"}, 1),
        ({"identity": "identity:ana"}, ANA_PROCEDURES),
        ({"scope": "identity", "scope_key": "identity:luka"}, LUKA_FACTS + 4),
        ({"status": "superseded"}, 2),
        ({"status": "quarantined"}, 2),
        ({"kind": "procedure"}, ANA_PROCEDURES + 1),
        ({"trust": "operator"}, ANA_PROCEDURES),
        ({"identity": "identity:luka", "status": "active", "kind": "fact"}, LUKA_FACTS + 1),
        ({"identity": "identity:nobody"}, 0),
    ],
)
def test_filters_narrow_the_rows(client, realm, params, expected):
    page = client.get(URL, {**params, "limit": "200"}).content.decode()

    assert len(row_ids(page)) == expected
    for name, value in params.items():  # the form shows the filter state it was given
        assert f'value="{value}"' in page


def test_filter_form_pushes_the_url_and_targets_the_results(client, realm):
    page = client.get(URL).content.decode()

    assert 'hx-push-url="true"' in page and 'hx-target="#records-results"' in page
    assert 'method="get"' in page


@pytest.mark.parametrize("with_htmx", [False, True])
def test_following_load_more_to_the_end_gives_every_row_once(client, realm, with_htmx):
    headers = HX if with_htmx else {}
    seen: list[str] = []
    url = f"{URL}?limit=7"
    for _ in range(20):  # infinite-loop guard: 36 rows at 7 a page need 6 requests
        response = client.get(url, **headers) if seen else client.get(url)
        assert response.status_code == 200
        page = response.content.decode()
        seen += row_ids(page)
        href = more_href(page)
        if href is None:
            break
        assert "limit=7" in href  # the filter state rides along with the cursor
        url = URL + href
    else:
        pytest.fail("load more never reached the end")

    assert len(seen) == len(set(seen)) == ALL_RECORDS
    assert "End of the records." in page


def test_load_more_is_a_plain_link_that_htmx_swaps_in_place(client, realm):
    page = client.get(URL, {"limit": "5"}).content.decode()
    href = more_href(page)

    assert href is not None and "cursor=" in href
    assert 'hx-target="closest tr"' in page and 'hx-swap="outerHTML"' in page


def test_load_more_fragment_holds_only_the_next_rows(client, realm):
    first = client.get(URL, {"limit": "5"}).content.decode()
    response = client.get(URL + more_href(first), **HX)
    fragment = response.content.decode()

    assert "<html" not in fragment and "records-results" not in fragment
    assert fragment.lstrip().startswith("<tr")
    assert len(row_ids(fragment)) == 5
    assert not set(row_ids(fragment)) & set(row_ids(first))


def test_htmx_filter_request_gets_the_results_block_alone(client, realm):
    response = client.get(URL, {"scope": "mob"}, **HX)
    fragment = response.content.decode()

    assert "<html" not in fragment and "<nav" not in fragment
    assert fragment.lstrip().startswith('<section id="records-results"')
    assert len(row_ids(fragment)) == MOB_GOTCHAS + 1


def test_history_restore_gets_the_whole_page(client, realm):
    response = client.get(URL, {"scope": "mob"}, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true")
    page = response.content.decode()

    assert page.startswith("<!doctype html>")
    assert 'id="records-results"' in page and "Sign out" in page


def test_flags_show_quarantined_superseded_and_claimant(client, realm):
    page = client.get(URL, {"limit": "200"}).content.decode()
    rows = {memory_id: page.split(f'data-memory-id="{memory_id}"', 1)[1].split("</tr>", 1)[0] for memory_id in row_ids(page)}

    assert "claimant" in rows[realm.ids["claimant"]] and ">Q<" in rows[realm.ids["claimant"]]
    assert ">superseded<" in rows[realm.ids["seat_v1"]]
    assert "claimant" not in rows[realm.ids["seat_v3"]]  # a committed successor is no claimant
    assert "⚑" in rows[realm.ids["quarantined"]]


def test_empty_filter_result_says_so_and_offers_to_clear(client, realm):
    page = client.get(URL, {"identity": "identity:nobody"}).content.decode()

    assert "No records match these filters." in page
    assert f'href="{URL}"' in page


def test_no_realms_at_all_is_an_empty_state(client, agent_memory_dir):
    page = client.get(URL).content.decode()

    assert "No records yet." in page


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("cursor=not-a-cursor", "Invalid params: malformed cursor"),
        ("cursor=-5:mem-1", "Invalid params: malformed cursor"),
        ("status=sleeping", "Invalid params: unknown status &#x27;sleeping&#x27;"),
        ("scope=galaxy", "Invalid params: unknown scope &#x27;galaxy&#x27;"),
        ("kind=rumour", "Invalid params: unknown kind &#x27;rumour&#x27;"),
        ("trust=blind", "Invalid params: unknown trust &#x27;blind&#x27;"),
        ("realm=nowhere", "Invalid params: unknown realm &#x27;nowhere&#x27;"),
    ],
)
def test_bad_query_is_a_400_with_a_clear_message(client, realm, query, message):
    response = client.get(f"{URL}?{query}")

    assert response.status_code == 400
    assert message in response.content.decode()


def test_limit_that_is_not_a_number_falls_back_to_the_default(client, realm):
    response = client.get(URL, {"limit": "lots"})

    assert response.status_code == 200
    assert len(row_ids(response.content.decode())) == ALL_RECORDS  # default 50 > 36


def test_denied_scope_filter_says_no_grant_not_empty(client_for, realm, posture):
    posture("standard")
    page = client_for(NO_OPERATOR).get(URL, {"scope": "operator"}).content.decode()

    assert "No grant." in page and "operator.memory.read" in page
    assert "No records match" not in page


def test_scoped_reader_sees_only_its_identity(client_for, realm, posture):
    posture("standard")
    page = client_for(SCOUT_READER).get(URL, {"limit": "200"}).content.decode()

    # identity:luka's rows minus the quarantined claimant (no review grant)
    assert len(row_ids(page)) == LUKA_FACTS + 3


def test_load_more_moves_the_count_above_the_table_to_the_rows_on_screen(client, realm):
    first = client.get(URL, {"limit": "10"}).content.decode()
    assert f'<p id="records-count" class="records-count" role="status">1–10 of {ALL_RECORDS}</p>' in first

    more = client.get(URL + more_href(first), **HX).content.decode()

    # docs/daily-use.md §9: the count above the table is swapped out of band, inside a <template>
    # (the only element that may stand among table rows).
    assert (f'<template><p id="records-count" class="records-count" role="status" hx-swap-oob="true">'
            f'1–20 of {ALL_RECORDS}</p>') in more.replace("\n", "")
