"""GET /console/memory/records/?sort=utility: MobKit's utility order over the whole store, keyset-paged."""

from __future__ import annotations

import html
import re

import pytest

from memory_panel.simulator.store_writer import identity_scope, mob_scope
from tests.support.postures import SCOUT_READER as SCOPED

URL = "/console/memory/records/"


@pytest.fixture
def realm(realm_writer):
    """Records whose utility order is known: (title, injections, judged useful)."""
    w = realm_writer("default")
    luka = identity_scope("default", "identity:luka")
    usage = {
        "never injected": (0, 0),
        "dead small": (3, 0),
        "dead big": (4, 0),
        "half useful": (2, 1),
        "all useful": (1, 1),
        "ratio zero": (2, 0),
    }
    ids = {}
    for title, (injected, useful) in usage.items():
        w.clock.advance(1000)
        body = "x" * 500 if title == "dead big" else "short body"
        ids[title] = w.remember(luka, title, body)
        for _ in range(injected):
            w.record_injection(ids[title], "identity:luka", session_key="s")
        for _ in range(useful):
            w.mark_usage(ids[title], "judged_useful")
    for n in range(30):  # filler never injected, in another scope, in recency order
        w.clock.advance(1000)
        w.remember(mob_scope("default", "ops"), f"Filler {n:02d}", f"Body {n}.")
    return ids


def titles(page: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r'<td class="record-title">\s*<a href="[^"]*" title="[^"]*">([^<]+)</a>', page)]


def more_url(page: str) -> str | None:
    found = re.search(r'<a class="button" href="([^"]+)" hx-get', page)
    return URL + html.unescape(found.group(1)) if found else None  # the link is relative: "?…"


def test_utility_order_is_dead_then_ratio_then_bytes_spent(client_for, realm, read_path):
    client = client_for()
    client.get(URL)
    page = client.get(URL, {"sort": "utility", "limit": 8}).content.decode()

    # dead (by bytes spent: 4 × 500 before 3 × 10), then ratio 0, 0.5, 1, then never injected
    # newest first (records order), filler included
    assert titles(page) == ["dead big", "dead small", "ratio zero", "half useful", "all useful",
                            "Filler 29", "Filler 28", "Filler 27"]
    assert page.count(">DEAD</span>") == 2
    assert "inj 4 · recall 0 · useful 0 · ratio 0.00" in page


def test_cursor_walk_in_utility_order_returns_every_row_once(client_for, realm, read_path):
    client = client_for()
    client.get(URL)
    url: str | None = f"{URL}?sort=utility&limit=5"
    seen: list[str] = []
    for _ in range(20):  # guard against a cursor that loops
        page = client.get(url).content.decode()
        seen += titles(page)
        url = more_url(page)
        if url is None:
            break
        assert "sort=utility" in url and "cursor=u1." in url
    assert len(seen) == 36 and len(set(seen)) == 36
    assert seen[:2] == ["dead big", "dead small"]


def test_kind_filter_applies_in_the_store_query_so_pages_stay_full(client_for, realm, read_path):
    page = client_for().get(URL, {"sort": "utility", "scope": "mob", "limit": 10}).content.decode()

    assert titles(page) == [f"Filler {n:02d}" for n in range(29, 19, -1)]


def test_scoped_reader_utility_pages_hold_only_its_scopes(client_for, realm, posture, read_path):
    posture("standard")
    page = client_for(SCOPED).get(URL, {"sort": "utility"}).content.decode()

    assert not any(t.startswith("Filler") for t in titles(page))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"sort": "size"}, "unknown sort &#x27;size&#x27; (expected recency or utility)"),
        ({"sort": "utility", "cursor": "1700000000000:abc"}, "a utility cursor comes from a sort=utility page"),
        ({"sort": "utility", "cursor": "u1.123"}, "malformed cursor"),
    ],
)
def test_bad_sort_or_cursor_is_a_clear_400(client_for, realm, params, message):
    response = client_for().get(URL, params)

    assert response.status_code == 400
    assert message in response.content.decode()


def test_rows_group_by_scope_only_when_asked_and_by_recency(client_for, realm):
    client = client_for()

    grouped = client.get(URL, {"group": "scope"}).content.decode()
    assert re.findall(r'data-group="([^"]+)"', grouped) == ["identity:default:identity:luka", "mob:default:ops"]
    assert 'data-group="' not in client.get(URL).content.decode()
    assert 'data-group="' not in client.get(URL, {"sort": "utility", "group": "scope"}).content.decode()
    assert client.get(URL, {"group": "realm"}).status_code == 400

