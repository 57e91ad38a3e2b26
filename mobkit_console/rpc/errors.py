"""JSON-RPC error objects with MobKit's codes and messages (docs/wire-contract.md §1.5).

The memory domain raises its own errors (``memory_panel/errors.py``); ``rpc_error_for`` is the one
table that turns each into MobKit's code and ``data``.
"""

from __future__ import annotations

from typing import Any

from memory_panel import errors as panel

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
NOT_FOUND = -32001
# docs/wire-contract.md §1.5 (console additions): a realm asked for alone whose file cannot be read.
REALM_UNREADABLE = NOT_FOUND
READ_ONLY = -32010
# docs/wire-contract.md §1.5 (console additions): a large realm whose index is being built; try again.
REALM_INDEXING = -32020
# MobKit's MEMORY_BACKEND_UNAVAILABLE_CODE of the current era (v0.4.13 used -32010, here READ_ONLY).
MEMORY_BACKEND_UNAVAILABLE = -32012
ACCESS_DENIED = -32030
# docs/access.md §2.5: an access method asked of a console with no access.toml.
ACCESS_UNAVAILABLE = -32004


class RpcError(Exception):
    """An error that travels inside the JSON-RPC envelope."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "data": self.data}


# Most specific class first: UnknownRealm is an InvalidParams.
_CODES: tuple[tuple[type[panel.PanelError], int], ...] = (
    (panel.InvalidParams, INVALID_PARAMS),
    (panel.NotFound, NOT_FOUND),
    (panel.AccessDenied, ACCESS_DENIED),
    (panel.ReadOnly, READ_ONLY),
    (panel.BackendUnavailable, MEMORY_BACKEND_UNAVAILABLE),
    (panel.StoreFailed, INTERNAL_ERROR),
    (panel.AuditRefused, INTERNAL_ERROR),
)


def rpc_error_for(error: panel.PanelError) -> RpcError:
    code = next((code for kind, code in _CODES if isinstance(error, kind)), INTERNAL_ERROR)
    data: dict[str, Any] | None = None
    if isinstance(error, panel.RealmIndexing):
        code = REALM_INDEXING
        data = error.progress.as_data()
    elif isinstance(error, panel.StoreFailed) and error.realm is not None:
        code = REALM_UNREADABLE
        data = {"realm": error.realm, "reason": error.reason}
    elif isinstance(error, panel.AccessDenied):
        data = {"kind": "access_denied", "action": error.action, "resource": error.resource}
    elif isinstance(error, panel.ReadOnly):
        data = {"kind": "read_only"}
    elif isinstance(error, panel.AuditRefused):
        data = {"kind": "audit_unavailable"}
    return RpcError(code, error.message, data)


def request_budget_exhausted(budget_ms: int) -> RpcError:
    """A batch call not run because its request spent MOBKIT_RPC_REQUEST_BUDGET_MS (the console's
    own error; MobKit has no batch budget). Sending the call again in a new request is safe."""
    return RpcError(
        INTERNAL_ERROR,
        f"request budget exhausted: the batch spent its {budget_ms} ms before this call; send it again",
        {"kind": "request_budget_exhausted", "budget_ms": budget_ms},
    )
