"""Following next_cursor to the end: no duplicate, no gap, full pages, ties broken by id (docs/store-format.md §5.1).

The console pages keyset-style across realms too, and never lets hidden rows consume a page
(selectors.record_list); both are checked here against orderings built from what was written.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_panel.store.realm_index import index_dir
from tests.support.postures import LEAD, SCOUT, SCOUT_ONLY, USER
from tests.support.rpc import panel
from tests.support.worlds import write_notes
from tests.support.written import T0, Written, newest_first, reviewer_only

pytestmark = pytest.mark.django_db

MAX_PAGES = 500  # the infinite-loop guard: no walk here needs more


@pytest.fixture(autouse=True, params=["direct", "realm_index"])
def paging_path(request, settings) -> Iterator[str]:
    """Every walk runs twice: straight off the realm file, and through the console's realm index."""
    if request.param == "realm_index":
        settings.MOBKIT_REALM_INDEX_MIN_ROWS = 1
        settings.MOBKIT_REALM_INDEX_BACKGROUND = False  # build on first use, inside the request
    yield request.param
    built = list(index_dir().rglob("gen-*.sqlite3"))
    assert bool(built) == (request.param == "realm_index")  # the walk really took this path


def walk(client, params: dict, limit: int) -> list[list[dict]]:
    """Every page of one walk; asserts each next_cursor names the last row returned."""
    pages: list[list[dict]] = []
    cursor = None
    for _ in range(MAX_PAGES):
        query = {**params, "limit": limit, **({"cursor": cursor} if cursor else {})}
        result = panel(client, "records", query).result
        pages.append(result["records"])
        cursor = result["next_cursor"]
        if cursor is None:
            return pages
        last = result["records"][-1]
        assert cursor == f"{last['updated_at_ms']}:{last['id']}"
    pytest.fail(f"cursor walk did not end within {MAX_PAGES} pages")


def assert_walk(client, params: dict, limit: int, want: list[Written]) -> None:
    pages = walk(client, params, limit)
    seen = [row for page in pages for row in page]
    assert [r["id"] for r in seen] == [w.id for w in want]  # order, no duplicate, no gap
    assert seen == [w.list_row() for w in want]
    assert all(len(page) == limit for page in pages[:-1]), [len(p) for p in pages]  # full pages
    assert 0 < len(pages[-1]) <= limit or (not want and pages == [[]])
    assert len(pages) == max(1, -(-len(want) // limit))


@pytest.fixture
def one_realm(agent_memory_dir, signed_in) -> list[Written]:
    rows = write_notes(agent_memory_dir, "walk", 61)
    signed_in(USER)
    return rows


@pytest.mark.parametrize("limit", [1, 7, 50, 61, 200])
def test_walk_single_realm_with_ties(client, one_realm, limit):
    want = newest_first(one_realm)
    assert len({r.updated_at_ms for r in one_realm}) < len(one_realm)  # ties really exist
    assert_walk(client, {"realm": "walk"}, limit, want)
    assert_walk(client, {}, limit, want)  # the only realm file, no realm param


@pytest.mark.parametrize("limit", [1, 7, 50])
def test_walk_with_filters(client, one_realm, limit):
    want = newest_first(r for r in one_realm if r.scope_key == SCOUT)
    assert_walk(client, {"identity": SCOUT, "status": "active"}, limit, want)


def test_walk_resumes_from_a_cursor_between_tied_rows(client, one_realm):
    want = newest_first(one_realm)
    tied = next(i for i in range(len(want) - 1) if want[i].updated_at_ms == want[i + 1].updated_at_ms)
    result = panel(client, "records", {"realm": "walk", "cursor": want[tied].cursor, "limit": 5}).result
    assert [r["id"] for r in result["records"]] == [w.id for w in want[tied + 1 : tied + 6]]


@pytest.fixture
def three_realms(agent_memory_dir, signed_in) -> list[Written]:
    rows: list[Written] = []
    # Same clock start in every realm: timestamps tie across realms as well as within one.
    for realm, count in (("alpha", 17), ("beta", 23), ("gamma", 9)):
        rows += write_notes(agent_memory_dir, realm, count, tie_every=2 if realm == "beta" else 3)
    signed_in(USER)
    return rows


@pytest.mark.parametrize("limit", [1, 7, 50])
def test_walk_across_realms_without_realm_param(client, three_realms, limit):
    want = newest_first(three_realms)
    assert_walk(client, {}, limit, want)
    first = panel(client, "records", {"limit": limit}).result
    assert first["realms"] == ["alpha", "beta", "gamma"]


@pytest.mark.parametrize("limit", [1, 7, 50])
def test_walk_across_realms_one_realm_at_a_time(client, three_realms, limit):
    for realm in ("alpha", "beta", "gamma"):
        assert_walk(client, {"realm": realm}, limit, newest_first(r for r in three_realms if r.realm == realm))


def sparse_scope(i: int) -> tuple[str, str, bool]:
    """One visible scout row in seven; the rest are lead rows, mob rows and quarantined scout rows."""
    if i % 7 == 0:
        return ("identity", SCOUT, False)
    if i % 7 == 3:
        return ("identity", SCOUT, True)
    if i % 7 == 5:
        return ("mob", "ops", False)
    return ("identity", LEAD, False)


@pytest.fixture
def scoped_reader(agent_memory_dir, access_toml, signed_in):
    access_toml(SCOUT_ONLY)
    signed_in(USER)


@pytest.fixture(scope="module")
def sparse_files(tmp_path_factory) -> tuple[Path, list[Written]]:
    # 490 rows, 70 visible: hidden runs are longer than one read batch, so the fill loop must go on.
    root = tmp_path_factory.mktemp("sparse") / "agent-memory"
    rows = write_notes(root, "sparse", 420, pick_scope=sparse_scope)
    rows += write_notes(root, "second", 70, start_ms=T0 + 5, pick_scope=sparse_scope)
    return root, rows


@pytest.mark.parametrize("limit", [1, 7, 50])
def test_scoped_reader_walk_sees_every_visible_row_once_in_full_pages(client, sparse_files, settings, scoped_reader,
                                                                       limit):
    root, rows = sparse_files
    settings.MOBKIT_AGENT_MEMORY_ROOT = root
    visible = [r for r in rows if r.scope_key == SCOUT and not reviewer_only(r)]
    assert len(visible) == 70
    assert_walk(client, {"realm": "sparse"}, limit, newest_first(r for r in visible if r.realm == "sparse"))
    assert_walk(client, {}, limit, newest_first(visible))


def test_scoped_reader_with_nothing_visible_gets_one_empty_page(client, agent_memory_dir, scoped_reader):
    write_notes(agent_memory_dir, "lead-only", 90, pick_scope=lambda i: ("identity", LEAD, False))
    assert walk(client, {}, 7) == [[]]
