"""Search, cursors and exports against hand-edited rows and damaged realms (docs/realm-failures.md)."""

from __future__ import annotations

import pytest

from memory_panel.simulator.store_writer import identity_scope
from tests.hardening.support import rpc

pytestmark = pytest.mark.django_db

LUKA = "identity:luka"
REPLACEMENT = "\ufffd"


@pytest.fixture
def searched_realm(realm_writer, client_signed_in):
    """Realm ``default`` with three notes about Oslo, already indexed by one search."""
    writer = realm_writer("default")
    ids = []
    for n in range(3):
        writer.clock.advance(1000)
        ids.append(writer.remember(identity_scope("default", LUKA), f"Fact {n}", f"Oslo trip {n}"))
    assert len(rpc(client_signed_in, "mobkit/memory/panel/search", {"query": "oslo"})["result"]["records"]) == 3
    return writer, ids


@pytest.mark.parametrize("column", ["title", "body", "tags"])
def test_search_lists_and_flags_a_row_whose_text_is_not_utf8(searched_realm, client_signed_in, column):
    writer, ids = searched_realm
    writer.conn.execute(f"UPDATE records SET {column} = X'FFFE41' WHERE memory_id = ?", (ids[1],))
    rows = rpc(client_signed_in, "mobkit/memory/panel/search", {"query": "oslo"})["result"]["records"]
    edited = next(row for row in rows if row["id"] == ids[1])
    assert column in edited["malformed_columns"]
    page = client_signed_in.get("/console/memory/records/", {"q": "oslo"})
    assert page.status_code == 200
    for export in ("/console/memory/records.csv", "/console/memory/records.ndjson"):
        reply = client_signed_in.get(export, {"q": "oslo"})
        assert reply.status_code == 200
        assert b"".join(reply.streaming_content).count(ids[1].encode()) == 1
