"""Fuzzing every JSON-RPC method's params: any input is answered in the JSON-RPC envelope (docs/wire-contract.md §1.5).

Never a 500, never a reply that is not strict JSON, never the generic -32603 of an unexpected
exception: bad input is a -32600/-32602 (or a result), whatever the method.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobkit_console.rpc.registry import method_names
from tests.fuzz.strategies import any_text, dumps, hostile_values
from tests.support.postures import USER
from tests.support.rpc import RPC

pytestmark = pytest.mark.django_db

PARAM_NAMES = ["realm", "scope", "identity", "scope_key", "status", "limit", "cursor", "memory_id", "query",
               "query_text", "max_entries", "kind", "trust", "entity", "topic", "store"]
params_objects = st.dictionaries(st.sampled_from(PARAM_NAMES) | any_text, hostile_values, max_size=4)
ids = st.none() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | any_text
FUZZ = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def strict_json(raw: bytes):
    def refuse(constant: str):
        raise AssertionError(f"reply holds {constant}: not JSON")

    text = raw.decode("utf-8")  # a lone surrogate cannot be in UTF-8: this fails on one
    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def reader(client, world, signed_in):
    signed_in(USER)
    return client


@pytest.mark.parametrize("method", method_names())
@FUZZ
@given(params=params_objects | hostile_values, request_id=ids)
def test_any_params_get_a_json_rpc_answer(reader, method, params, request_id):
    body = dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    response = reader.post(RPC, body, content_type="application/json")

    assert response.status_code == 200, response.content[:300]
    reply = strict_json(response.content)
    assert reply["jsonrpc"] == "2.0"
    assert ("result" in reply) != ("error" in reply)
    if "error" in reply:
        # -32603 is what an unexpected exception (or a store failure) becomes: never bad input's answer.
        assert reply["error"]["code"] != -32603, reply
        assert isinstance(reply["error"]["message"], str)
