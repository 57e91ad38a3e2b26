"""Input past what the file system or a u64 can hold is a clear 400 / -32602 naming it (issue 14, item 4)."""

from __future__ import annotations

import pytest

from memory_panel.simulator.store_writer import identity_scope
from tests.hardening.support import HTML_PAGES, PANEL_METHODS, rpc

pytestmark = pytest.mark.django_db

TOO_LONG_REALM = "r" * 300  # 300 bytes + ".sqlite3": past NAME_MAX (255)
LONGEST_REALM = "r" * (255 - len(".sqlite3"))
REALM_TOO_LONG = "Invalid params: realm is too long: its file name would be 308 bytes, the file system allows 255"

# Cursors whose number is not a u64, including ones Python's int() refuses outright.
BAD_CURSORS = [
    f"{2**64}:mem-x",
    f"{2**64 + 1}:mem-x",
    "9" * 25 + ":mem-x",
    "9" * 5000 + ":mem-x",
    "1" * 4301 + ":mem-x",
    "²:mem-x",
    "-1:mem-x",
]


@pytest.fixture
def one_realm(realm_writer):
    writer = realm_writer("default")
    writer.remember(identity_scope("default", "identity:luka"), "Fact", "Body")
    return writer


@pytest.mark.parametrize("method", [*PANEL_METHODS, "mobkit/memory/panel/record"])
def test_a_realm_longer_than_a_file_name_is_invalid_params_on_rpc(one_realm, client_signed_in, method):
    error = rpc(client_signed_in, method, {"realm": TOO_LONG_REALM, "memory_id": "mem-x"})["error"]
    assert error == {"code": -32602, "message": REALM_TOO_LONG, "data": None}


@pytest.mark.parametrize("path", [*HTML_PAGES, "/console/memory/records/mem-x/", "/console/memory/recall/"])
def test_a_realm_longer_than_a_file_name_is_a_400_page(one_realm, client_signed_in, path):
    page = client_signed_in.get(path, {"realm": TOO_LONG_REALM, "identity": "identity:luka"})
    assert page.status_code == 400
    assert "realm is too long" in page.content.decode()


def test_the_longest_realm_name_a_file_can_carry_is_just_unknown(one_realm, client_signed_in):
    error = rpc(client_signed_in, "mobkit/memory/panel/records", {"realm": LONGEST_REALM})["error"]
    assert error["code"] == -32602 and error["message"] == f"Invalid params: unknown realm '{LONGEST_REALM}'"


@pytest.mark.parametrize("cursor", BAD_CURSORS, ids=lambda c: c[:12])
def test_a_cursor_number_past_u64_is_malformed_on_rpc(one_realm, client_signed_in, cursor):
    error = rpc(client_signed_in, "mobkit/memory/panel/records", {"cursor": cursor})["error"]
    assert error == {"code": -32602, "message": "Invalid params: malformed cursor", "data": None}


@pytest.mark.parametrize("cursor", BAD_CURSORS, ids=lambda c: c[:12])
def test_a_cursor_number_past_u64_is_a_400_page(one_realm, client_signed_in, cursor):
    page = client_signed_in.get("/console/memory/records/", {"cursor": cursor})
    assert page.status_code == 400 and "malformed cursor" in page.content.decode()


def test_the_largest_u64_cursor_is_valid_and_lists_every_row(one_realm, client_signed_in):
    result = rpc(client_signed_in, "mobkit/memory/panel/records", {"cursor": f"{2**64 - 1}:mem-x"})["result"]
    assert len(result["records"]) == 1
    padded = rpc(client_signed_in, "mobkit/memory/panel/records", {"cursor": "0" * 40 + "5:mem-x"})["result"]
    assert padded["records"] == []


@pytest.mark.parametrize("limit", ["9" * 5000, "²", "1" * 4301, "-3"])
def test_a_limit_no_integer_can_hold_reads_as_the_default(one_realm, client_signed_in, limit):
    for path in ("/console/memory/records/", "/console/memory/quarantine/", "/console/memory/dreams/"):
        assert client_signed_in.get(path, {"limit": limit}).status_code == 200, path
    recall = client_signed_in.get("/console/memory/recall/", {"identity": "identity:luka", "max_entries": limit})
    assert recall.status_code == 200
