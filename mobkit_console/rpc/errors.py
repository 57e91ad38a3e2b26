"""JSON-RPC error objects with MobKit's codes and messages (spec console-panel-and-access §1.5)."""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
NOT_FOUND = -32001
READ_ONLY = -32010
ACCESS_DENIED = -32030


class RpcError(Exception):
    """An error that travels inside the JSON-RPC envelope; views render the same message."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "data": self.data}


def invalid_params(detail: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {detail}")


def access_denied(action: str, resource: str | None = None) -> RpcError:
    return RpcError(
        ACCESS_DENIED,
        f"access denied: {action}",
        {"kind": "access_denied", "action": action, "resource": resource},
    )


def read_only() -> RpcError:
    return RpcError(READ_ONLY, "console is read-only", {"kind": "read_only"})


def request_budget_exhausted(budget_ms: int) -> RpcError:
    """A batch call not run because its request spent MOBKIT_RPC_REQUEST_BUDGET_MS (the console's
    own error; MobKit has no batch budget). Sending the call again in a new request is safe."""
    return RpcError(
        INTERNAL_ERROR,
        f"request budget exhausted: the batch spent its {budget_ms} ms before this call; send it again",
        {"kind": "request_budget_exhausted", "budget_ms": budget_ms},
    )
