"""Calling ``POST /console/rpc`` with a Django test client, and the error objects it answers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

RPC = "/console/rpc"
PANEL = "mobkit/memory/panel/"


@dataclass
class Reply:
    status: int
    raw: bytes
    body: Any

    @property
    def result(self) -> Any:
        assert "error" not in self.body, self.body
        return self.body["result"]

    @property
    def error(self) -> dict[str, Any]:
        assert "result" not in self.body, self.body
        return self.body["error"]


def post_raw(client, payload: bytes | str, **headers) -> Reply:
    response = client.post(RPC, payload, content_type="application/json", **headers)
    raw = response.content
    return Reply(response.status_code, raw, json.loads(raw) if raw else None)


def call(client, method: str, params: Any = None, *, request_id: Any = 1, **headers) -> Reply:
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        request["params"] = params
    return post_raw(client, json.dumps(request), **headers)


def panel(client, name: str, params: Any = None, **headers) -> Reply:
    return call(client, PANEL + name, params, **headers)


def call_ok(client, method: str, params: Any = None) -> dict[str, Any]:
    """The whole response body of a call that must answer HTTP 200 (a result or a JSON-RPC error)."""
    reply = call(client, method, params)
    assert reply.status == 200, reply.raw
    return reply.body


def invalid_params(message: str) -> dict[str, Any]:
    return {"code": -32602, "message": f"Invalid params: {message}", "data": None}


def denied(action: str, resource: str | None) -> dict[str, Any]:
    return {
        "code": -32030,
        "message": f"access denied: {action}",
        "data": {"kind": "access_denied", "action": action, "resource": resource},
    }
