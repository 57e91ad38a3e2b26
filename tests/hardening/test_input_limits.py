"""Input past what the file system or a u64 can hold is a clear 400 / -32602 naming it (docs/realm-failures.md §3)."""

from __future__ import annotations

import base64
import json

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


def _forged(cursor: str, **changes) -> str:
    """A search cursor with some fields replaced, its digest kept: a tampered but well-bound cursor."""
    encoded = cursor.removeprefix("s1.")
    fields = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    for position, value in changes.items():
        fields[int(position.removeprefix("f"))] = value
    payload = json.dumps(fields, separators=(",", ":"))
    return "s1." + base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def _encoded(payload: str) -> str:
    return "s1." + base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


@pytest.fixture
def search_cursor(realm_writer, client_signed_in) -> str:
    writer = realm_writer("default")
    for n in range(3):
        writer.clock.advance(1000)
        writer.remember(identity_scope("default", "identity:luka"), f"Fact {n}", "oslo trip")
    return rpc(client_signed_in, "mobkit/memory/panel/search", {"query": "oslo", "limit": 1})["result"]["next_cursor"]


# (what was tampered with, a function of a real cursor giving the tampered one)
TAMPERED_SEARCH_CURSORS = [
    ("nested brackets", lambda real: _encoded("[" * 5000 + "]" * 5000)),
    ("updated_at_ms 2**64", lambda real: _forged(real, f1=2**64)),
    ("updated_at_ms past int64", lambda real: _forged(real, f1=2**63)),
    ("negative updated_at_ms", lambda real: _forged(real, f1=-1)),
    ("lone surrogate id", lambda real: _forged(real, f2="\ud800")),
    ("bm25 past a float", lambda real: _forged(real, f0=10**400)),
    ("bm25 not a number", lambda real: real[:3] + _encoded(_payload_with_nan(real))[3:]),
]


def _payload_with_nan(real: str) -> str:
    encoded = real.removeprefix("s1.")
    fields = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    return json.dumps(["NaN-MARK", *fields[1:]]).replace('"NaN-MARK"', "NaN")


@pytest.mark.parametrize(("case", "tamper"), TAMPERED_SEARCH_CURSORS, ids=[c[0] for c in TAMPERED_SEARCH_CURSORS])
def test_a_tampered_search_cursor_is_invalid_params_and_a_400_page(search_cursor, client_signed_in, case, tamper):
    cursor = tamper(search_cursor)
    error = rpc(client_signed_in, "mobkit/memory/panel/search", {"query": "oslo", "cursor": cursor})["error"]
    assert error == {"code": -32602, "message": "Invalid params: malformed cursor", "data": None}
    page = client_signed_in.get("/console/memory/records/", {"q": "oslo", "cursor": cursor})
    assert page.status_code == 400 and "malformed cursor" in page.content.decode()

