"""JSON-RPC transport of POST /console/rpc: envelopes, batches, notifications, status codes (docs/wire-contract.md §1.1)."""

from __future__ import annotations

import json

import pytest

from mobkit_console.accounts.tokens import token_issue
from tests.support.clients import user_with_subject
from tests.support.postures import USER
from tests.support.rpc import PANEL, RPC, call, post_raw

pytestmark = pytest.mark.django_db

UNAUTHORIZED = "unauthorized: console rpc requires a valid auth token"
INVALID_REQUEST = {"code": -32600, "message": "Invalid Request", "data": None}


def request(method: str, request_id=1, params=None) -> dict:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    return body


@pytest.fixture
def reader(world, signed_in):
    return signed_in(USER)


def test_single_call_answers_200_with_result_and_no_error_key(client, reader, world):
    reply = call(client, PANEL + "harvests", request_id="abc")
    assert reply.status == 200
    assert reply.body == {"jsonrpc": "2.0", "id": "abc", "result": {"harvests": world.harvests, "realms": world.realms}}
    assert "error" not in reply.body


@pytest.mark.parametrize("request_id", [0, 7, -3, "x-1", None])
def test_request_id_echoed_verbatim(client, reader, request_id):
    reply = call(client, "mobkit/capabilities", request_id=request_id)
    assert reply.body["id"] == request_id
    assert reply.body["jsonrpc"] == "2.0"


def test_batch_keeps_order_and_mixes_results_and_errors(client, reader, world):
    batch = [
        request(PANEL + "harvests", 1),
        request("mobkit/nope", 2),
        request(PANEL + "records", 3, {"scope": "galaxy"}),
        {"jsonrpc": "2.0", "method": PANEL + "harvests"},  # a notification: no reply
        request(PANEL + "proposals", "four"),
        42,
    ]
    reply = post_raw(client, json.dumps(batch))
    assert reply.status == 200
    assert reply.body == [
        {"jsonrpc": "2.0", "id": 1, "result": {"harvests": world.harvests, "realms": world.realms}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found: mobkit/nope", "data": None}},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Invalid params: unknown scope 'galaxy'", "data": None}},
        {"jsonrpc": "2.0", "id": "four", "result": {"proposals": world.proposals, "realms": world.realms}},
        {"jsonrpc": "2.0", "id": None, "error": INVALID_REQUEST},
    ]


def test_notification_gets_no_reply(client, reader):
    reply = post_raw(client, json.dumps({"jsonrpc": "2.0", "method": PANEL + "harvests"}))
    assert reply.status == 204
    assert reply.raw == b""


def test_failing_notification_gets_no_reply_either(client, reader):
    reply = post_raw(client, json.dumps({"jsonrpc": "2.0", "method": PANEL + "records", "params": {"status": "x"}}))
    assert (reply.status, reply.raw) == (204, b"")


def test_all_notification_batch_answers_204(client, reader):
    batch = [{"jsonrpc": "2.0", "method": "mobkit/capabilities"}, {"jsonrpc": "2.0", "method": "mobkit/nope"}]
    reply = post_raw(client, json.dumps(batch))
    assert (reply.status, reply.raw) == (204, b"")


@pytest.mark.parametrize("raw", ["{", "not json", '{"jsonrpc": "2.0",', b"\xff\xfe", ""])
def test_unparseable_body_is_parse_error(client, reader, raw):
    reply = post_raw(client, raw)
    assert reply.status == 200
    assert reply.body == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error", "data": None}}


@pytest.mark.parametrize(
    "payload, reply_id",
    [
        ({"id": 1, "method": "mobkit/capabilities"}, 1),  # missing jsonrpc
        ({"jsonrpc": "1.0", "id": 1, "method": "mobkit/capabilities"}, 1),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, 1),  # method not a string
        ({"jsonrpc": "2.0", "id": 1}, 1),  # no method
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "mobkit/capabilities"}, None),  # id not a scalar
        ("just a string", None),
        (17, None),
        (None, None),
    ],
)
def test_valid_json_that_is_not_a_request_is_invalid_request(client, reader, payload, reply_id):
    reply = post_raw(client, json.dumps(payload))
    assert reply.status == 200
    assert reply.body == {"jsonrpc": "2.0", "id": reply_id, "error": INVALID_REQUEST}


def test_empty_batch_is_invalid_request(client, reader):
    reply = post_raw(client, "[]")
    assert reply.status == 200
    assert reply.body == {"jsonrpc": "2.0", "id": None, "error": INVALID_REQUEST}


def test_batch_elements_that_are_not_objects_each_get_invalid_request(client, reader):
    reply = post_raw(client, json.dumps([1, "x", [], request("mobkit/capabilities", 9)]))
    assert reply.status == 200
    assert [r.get("error") for r in reply.body] == [INVALID_REQUEST, INVALID_REQUEST, INVALID_REQUEST, None]
    assert reply.body[3]["id"] == 9


def test_oversized_batch_is_refused_cleanly(client, reader):
    reply = post_raw(client, json.dumps([request("mobkit/capabilities", i) for i in range(101)]))
    assert reply.status == 200
    assert reply.body["error"]["code"] == -32600
    assert "at most 100" in reply.body["error"]["message"]


def test_unknown_method_is_method_not_found(client, reader):
    reply = call(client, "mobkit/memory/panel/everything", request_id=5)
    assert reply.status == 200
    assert reply.body == {"jsonrpc": "2.0", "id": 5, "error": {
        "code": -32601, "message": "Method not found: mobkit/memory/panel/everything", "data": None}}


@pytest.mark.parametrize("params", [[1, 2], "realm", 3, True])
def test_params_that_are_not_an_object_are_invalid_params(client, reader, params):
    reply = call(client, PANEL + "records", params)
    assert reply.status == 200
    assert reply.error["code"] == -32602
    assert reply.error["message"].startswith("Invalid params: ")


@pytest.mark.parametrize(
    "payload, request_id",
    [
        (request("mobkit/capabilities", 11), 11),
        (request("mobkit/capabilities", "s-1"), "s-1"),
        ([request("mobkit/capabilities", 11)], None),
        ("{not json", None),
    ],
)
def test_unauthenticated_call_is_401_with_mobkit_body(client, world, payload, request_id):
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    reply = post_raw(client, raw)
    assert reply.status == 401
    assert reply.body == {"jsonrpc": "2.0", "id": request_id, "error": {
        "code": -32600, "message": UNAUTHORIZED}}


def test_bearer_token_authenticates_and_a_bad_one_is_401(client, world):
    user = user_with_subject("program@example.test")
    token = token_issue(user=user)
    ok = call(client, "mobkit/access/status", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert ok.status == 200
    assert ok.result["subject"] == "program@example.test"
    records = call(client, PANEL + "records", {"realm": "other"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert records.result["records"] == [world["other_scout"].list_row()]

    bad = call(client, "mobkit/access/status", request_id=3, HTTP_AUTHORIZATION=f"Bearer {token}x")
    assert bad.status == 401
    assert bad.body == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32600, "message": UNAUTHORIZED}}


def test_bad_bearer_token_wins_over_a_session(client, reader):
    reply = call(client, "mobkit/capabilities", HTTP_AUTHORIZATION="Bearer mkc_forged")
    assert reply.status == 401


def test_body_over_the_size_limit_is_a_clear_error_not_a_500(client, reader, settings):
    huge = json.dumps(request(PANEL + "records", 1, {"realm": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)}))
    reply = post_raw(client, huge)
    assert reply.status == 413
    assert reply.body == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "request body too large", "data": None}}


def test_get_is_405(client, reader):
    assert client.get(RPC).status_code == 405


def test_no_csrf_token_needed_for_a_session_post(reader, world):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(reader)
    reply = call(strict, "mobkit/capabilities")
    assert reply.status == 200


# docs/wire-contract.md §1.5: JSON Python's decoder accepts but the console cannot answer (or echo) is refused
# whole as -32600 with id null, naming the field; never a 500, never an invalid-JSON reply.
NOT_FINITE = "is not a finite number (JSON has no NaN or Infinity)"


def nested_list(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def invalid_request(detail: str) -> dict:
    return {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": f"Invalid Request: {detail}", "data": None}}


@pytest.mark.parametrize(
    "raw, detail",
    [
        ('{"jsonrpc": "2.0", "id": NaN, "method": "mobkit/capabilities"}', f"request.id: NaN {NOT_FINITE}"),
        ('{"jsonrpc": "2.0", "id": 1e999, "method": "mobkit/capabilities"}', f"request.id: 1e999 {NOT_FINITE}"),
        ('[{"jsonrpc": "2.0", "id": 1, "method": "mobkit/capabilities"}, {"jsonrpc": "2.0", "id": -Infinity}]',
         f"batch[1].id: -Infinity {NOT_FINITE}"),
        (json.dumps(request(PANEL + "records", 1, {"realm": "default\ud800"})),
         "request.params.realm: lone surrogate \\ud800 is not valid Unicode"),
        (json.dumps(request(PANEL + "records", 1, {"limit": float("nan")})), f"request.params.limit: NaN {NOT_FINITE}"),
        ("[" * 1000 + "]" * 1000, "body: nested deeper than 64 levels"),
        (json.dumps(request(PANEL + "records", 1, {"realm": nested_list(100)})),
         "request.params.realm[0][0][0][0]…: nested deeper than 64 levels"),
    ],
)
def test_json_the_console_cannot_answer_is_invalid_request_naming_the_field(client, reader, raw, detail):
    reply = post_raw(client, raw)
    assert reply.status == 200
    assert reply.body == invalid_request(detail)
    json.loads(reply.raw, parse_constant=pytest.fail)  # the reply itself is strict JSON


def test_deeply_nested_body_without_credentials_is_a_clean_401(client, world):
    reply = post_raw(client, "[" * 1000 + "]" * 1000)
    assert reply.status == 401
    assert reply.body == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": UNAUTHORIZED}}


CROSS_SITE = "cross-origin request refused: a call signed in by the session cookie must come from the console's own origin"


def test_a_session_signed_call_from_another_site_is_refused_unrun(client, reader):
    body = json.dumps(request(PANEL + "harvests", 5))
    for origin in ("http://evil.example", "http://testserver:8001", "https://testserver", "null"):
        response = client.post(RPC, body, content_type="text/plain", HTTP_ORIGIN=origin)
        assert response.status_code == 403, origin
        assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": CROSS_SITE, "data": None}}


def test_a_session_signed_call_from_the_consoles_own_origin_or_no_browser_runs(client, reader):
    assert call(client, PANEL + "harvests", HTTP_ORIGIN="http://testserver").status == 200
    assert call(client, PANEL + "harvests").status == 200  # no Origin: not a cross-site browser request


def test_the_configured_public_origin_is_the_consoles_own(client, reader, settings):
    settings.MOBKIT_ALLOWED_ORIGINS = ["https://console.example.com"]
    assert call(client, PANEL + "harvests", HTTP_ORIGIN="https://console.example.com").status == 200
    assert call(client, PANEL + "harvests", HTTP_ORIGIN="http://testserver").status == 403


def test_a_bearer_call_from_any_origin_runs(client, world):
    token = token_issue(user=user_with_subject("program@example.test"))
    reply = call(client, PANEL + "harvests", HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_ORIGIN="http://evil.example")
    assert reply.status == 200 and "result" in reply.body
