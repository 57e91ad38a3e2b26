"""One bad row never breaks a listing or a search: it is shown, flagged, and walked once (docs/realm-failures.md §2).

Each case hand-edits one column of one row the way a damaged or hand-edited store can hold it,
then reads the realm's records (alone and across realms) over RPC and HTML, and the biography.
"""

from __future__ import annotations

import pytest

from memory_panel.simulator.store_writer import identity_scope
from tests.hardening.support import rpc

pytestmark = pytest.mark.django_db

LUKA = "identity:luka"
REPLACEMENT = "\ufffd"


@pytest.fixture
def realm(realm_writer, index_mode):
    """Realm ``default`` with five records a second apart, and a second realm ``other``."""
    writer = realm_writer("default")
    ids = []
    for n in range(5):
        writer.clock.advance(1000)
        ids.append(writer.remember(identity_scope("default", LUKA), f"Fact {n}", f"Body {n}"))
    other = realm_writer("other")
    other.remember(identity_scope("other", LUKA), "Other fact", "Other body")
    return writer, ids


# (what the hand edit does, SQL on the row, the column flagged, the title the row then shows)
HAND_EDITS = [
    ("title not valid UTF-8", "title = CAST(x'546974ff6c65' AS TEXT)", "title", f"Tit{REPLACEMENT}le"),
    ("title a BLOB", "title = x'546974ff6c65'", "title", f"Tit{REPLACEMENT}le"),
    ("scope_key not valid UTF-8", "scope_key = CAST(x'6964ff' AS TEXT)", "scope_key", "Fact 2"),
    ("tags not valid UTF-8", "tags = CAST(x'5b22ff225d' AS TEXT)", "tags", "Fact 2"),
    ("description a BLOB", "description = x'ff00'", "description", "Fact 2"),
]


def _edit(writer, memory_id: str, assignment: str) -> None:
    writer.conn.execute(f"UPDATE records SET {assignment} WHERE memory_id = ?", (memory_id,))


@pytest.mark.parametrize(("case", "assignment", "column", "title"), HAND_EDITS, ids=[c[0] for c in HAND_EDITS])
def test_a_row_with_an_undecodable_column_is_listed_and_flagged(realm, client_signed_in, case, assignment, column, title):
    writer, ids = realm
    _edit(writer, ids[2], assignment)
    for params in ({}, {"realm": "default"}):
        rows = rpc(client_signed_in, "mobkit/memory/panel/records", params)["result"]["records"]
        assert len(rows) == (6 if not params else 5)
        edited = next(row for row in rows if row["id"] == ids[2])
        assert column in edited["malformed_columns"]
        assert edited["title"] == title
        assert all("malformed_columns" not in row for row in rows if row["id"] != ids[2])
        page = client_signed_in.get("/console/memory/records/", params)
        assert page.status_code == 200
        assert "Fact 4" in page.content.decode()
    bio = rpc(client_signed_in, "mobkit/memory/panel/record", {"memory_id": ids[2]})["result"]["record"]
    assert column in bio["malformed_columns"]
    assert client_signed_in.get(f"/console/memory/records/{ids[2]}/").status_code == 200


@pytest.mark.parametrize("column", ["title", "body", "tags"])
def test_search_lists_and_flags_a_matching_row_whose_text_is_not_utf8(realm, client_signed_in, column):
    """The realm's search index caught up first, then the hand edit (no audit row, so the index keeps
    the old text): the realm file is read for the page."""
    writer, ids = realm
    query = {"query": "body", "realm": "default"}
    assert len(rpc(client_signed_in, "mobkit/memory/panel/search", query)["result"]["records"]) == 5
    _edit(writer, ids[1], f"{column} = X'FFFE41'")
    rows = rpc(client_signed_in, "mobkit/memory/panel/search", query)["result"]["records"]
    assert column in next(row for row in rows if row["id"] == ids[1])["malformed_columns"]
    assert client_signed_in.get("/console/memory/records/", {"q": "body", "realm": "default"}).status_code == 200
    for export in ("/console/memory/records.csv", "/console/memory/records.ndjson"):
        reply = client_signed_in.get(export, {"q": "body", "realm": "default"})
        assert reply.status_code == 200
        assert b"".join(reply.streaming_content).count(ids[1].encode()) == 1


@pytest.mark.parametrize("body", ["x'ff00fe'", "CAST(x'426fff6479' AS TEXT)"], ids=["blob", "bad-utf8-text"])
def test_a_body_that_is_not_text_still_has_a_biography(realm, client_signed_in, body):
    writer, ids = realm
    _edit(writer, ids[1], f"body = {body}")
    record = rpc(client_signed_in, "mobkit/memory/panel/record", {"memory_id": ids[1]})["result"]["record"]
    assert "body" in record["malformed_columns"] and REPLACEMENT in record["body"]
    page = client_signed_in.get(f"/console/memory/records/{ids[1]}/")
    assert page.status_code == 200 and REPLACEMENT in page.content.decode()
    listed = rpc(client_signed_in, "mobkit/memory/panel/records", {"realm": "default"})["result"]["records"]
    assert [row["id"] for row in listed] == ids[::-1]


def test_undecodable_title_bytes_are_escaped_on_the_page(realm, client_signed_in):
    writer, ids = realm
    # Not valid UTF-8, and markup around the bad byte: both must arrive as inert text.
    _edit(writer, ids[0], "title = CAST(x'3c623eff3c2f623e' AS TEXT)")
    html = client_signed_in.get("/console/memory/records/").content.decode()
    assert f"&lt;b&gt;{REPLACEMENT}&lt;/b&gt;" in html and f"<b>{REPLACEMENT}" not in html


def _walk(client, method_params: dict, *, limit: int) -> list[str]:
    seen: list[str] = []
    cursor = None
    for _ in range(100):  # guard: a walk that loops fails instead of hanging
        result = rpc(client, "mobkit/memory/panel/records", {**method_params, "limit": limit, "cursor": cursor})["result"]
        seen += [row["id"] for row in result["records"]]
        cursor = result["next_cursor"]
        if cursor is None:
            return seen
    raise AssertionError("the cursor walk did not end")


@pytest.mark.parametrize("value", ["'soon'", "1.5e12", "-7"], ids=["text", "real", "negative"])
@pytest.mark.parametrize("limit", [1, 2, 5])
def test_a_cursor_walk_returns_a_row_with_a_bad_updated_at_ms_exactly_once(realm, client_signed_in, value, limit):
    writer, ids = realm
    _edit(writer, ids[3], f"updated_at_ms = {value}")
    for params in ({"realm": "default"}, {}):
        seen = _walk(client_signed_in, params, limit=limit)
        expected = {*ids} if params else {*ids, *_other_ids(client_signed_in)}
        assert sorted(seen) == sorted(expected), (params, seen)
    # The bad row sorts as 0 (what it decodes to): last in the newest-first order.
    assert _walk(client_signed_in, {"realm": "default"}, limit=limit)[-1] == ids[3]


def _other_ids(client) -> list[str]:
    return [row["id"] for row in rpc(client, "mobkit/memory/panel/records", {"realm": "other"})["result"]["records"]]


def test_a_row_moved_after_the_index_caught_up_is_left_to_the_next_request(realm_writer, settings, monkeypatch):
    """Index positions are read before the rows: a row superseded in between must not break the order."""
    from memory_panel.cursor import Cursor
    from memory_panel.selectors import records as records_selector
    from memory_panel.store.realm_index import realm_index
    from memory_panel.store.record_filter import RecordFilter
    from access.caller import Access

    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    writer = realm_writer("default")
    ids = []
    for n in range(6):
        writer.clock.advance(1000)
        ids.append(writer.remember(identity_scope("default", LUKA), f"Fact {n}", f"Body {n}"))
    realm_index("default")  # builds the first generation
    caught_up = realm_index("default")
    assert caught_up is not None
    writer.clock.advance(1000)
    successor = writer.supersede(ids[1], "Fact 1 v2", "Body 1 v2")  # ids[1] moves to the top
    monkeypatch.setattr(records_selector, "realm_index", lambda realm, **options: caught_up)

    open_access = Access(subject="ops", groups=frozenset(), enforced=False, is_admin=False)
    seen: list[tuple[int, str]] = []
    cursor: Cursor | None = None
    while True:
        page = records_selector.record_list(
            access=open_access, realm="default", filters=RecordFilter(), limit=2, cursor=cursor
        )
        seen += [(r.updated_at_ms, r.id) for r in page.records]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == sorted(seen, reverse=True) and len(set(seen)) == len(seen)
    assert [memory_id for _, memory_id in seen] == [ids[5], ids[4], ids[3], ids[2], ids[0]]
    assert successor not in {memory_id for _, memory_id in seen}  # the stale index has not seen it yet
