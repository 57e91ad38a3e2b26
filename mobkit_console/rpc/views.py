"""``POST /console/rpc``: JSON-RPC 2.0 with MobKit's envelopes and status codes.

Written by hand rather than with a JSON-RPC library because MobKit's exact behaviour (HTTP 401 for
an unauthenticated call, -32030 with data at HTTP 200, its messages) is the contract.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from memory_panel.errors import PanelError
from memory_panel.store.realms import store_failed
from mobkit_console.access.caller import Access, access_for_user
from mobkit_console.rpc.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcError,
    rpc_error_for,
)
from mobkit_console.rpc.registry import method_get

logger = logging.getLogger("mobkit_console.rpc")

UNAUTHORIZED = "unauthorized: console rpc requires a valid auth token"
MAX_BATCH = 100


@csrf_exempt  # every method only reads, and token-carrying programs have no CSRF cookie to send
@require_POST
def rpc_endpoint(request: HttpRequest) -> HttpResponse:
    try:
        raw = request.body
    except RequestDataTooBig:
        return _error_response(None, INVALID_REQUEST, "request body too large", status=413)
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        payload = None
        if request.user.is_authenticated:
            return _error_response(None, PARSE_ERROR, "Parse error")
    if not request.user.is_authenticated:
        return _unauthorized(payload.get("id") if isinstance(payload, dict) else None)

    access = access_for_user(request.user)
    if isinstance(payload, list):
        if not payload:
            return _error_response(None, INVALID_REQUEST, "Invalid Request")
        if len(payload) > MAX_BATCH:
            return _error_response(
                None, INVALID_REQUEST, f"Invalid Request: a batch holds at most {MAX_BATCH} calls"
            )
        replies = [reply for call in payload if (reply := _dispatch(call, access)) is not None]
        return JsonResponse(replies, safe=False) if replies else HttpResponse(status=204)
    reply = _dispatch(payload, access)
    return JsonResponse(reply) if reply is not None else HttpResponse(status=204)


def _dispatch(call: Any, access: Access) -> dict[str, Any] | None:
    """One request object → its response object, or None for a notification."""
    if (
        not isinstance(call, dict)
        or call.get("jsonrpc") != "2.0"
        or not isinstance(call.get("method"), str)
        or not _valid_id(call.get("id"))
    ):
        request_id = call.get("id") if isinstance(call, dict) and _valid_id(call.get("id")) else None
        return _error_body(request_id, RpcError(INVALID_REQUEST, "Invalid Request"))
    is_notification = "id" not in call
    request_id = call.get("id")
    try:
        result = _call(call["method"], call.get("params"), access)
    except RpcError as error:
        return None if is_notification else _error_body(request_id, error)
    except PanelError as error:
        return None if is_notification else _error_body(request_id, rpc_error_for(error))
    except DatabaseError as error:
        # docs/wire-contract.md §1.5: MobKit's mapping is unknown; store failures read as internal errors.
        logger.warning("store error in %s: %s", call["method"], error)
        return None if is_notification else _error_body(request_id, rpc_error_for(store_failed(error)))
    except Exception:
        # A bug must still answer in the JSON-RPC envelope, never with Django's HTML error page.
        logger.exception("unexpected error in %s", call["method"])
        failure = RpcError(INTERNAL_ERROR, "Internal error")
        return None if is_notification else _error_body(request_id, failure)
    if is_notification:
        return None
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _call(name: str, params: Any, access: Access) -> dict[str, Any]:
    method = method_get(name)
    if method is None:
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {name}")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: params must be a JSON object")
    return method.handler(params, access=access)


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (
        isinstance(value, (int, float)) and not isinstance(value, bool)
    )


def _error_body(request_id: Any, error: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.as_json()}


def _unauthorized(request_id: Any) -> JsonResponse:
    # docs/wire-contract.md §C.1 gives this body exactly: no data key, unlike other errors.
    error = {"code": INVALID_REQUEST, "message": UNAUTHORIZED}
    return JsonResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status=401)


def _error_response(request_id: Any, code: int, message: str, *, status: int = 200) -> JsonResponse:
    return JsonResponse(_error_body(request_id, RpcError(code, message)), status=status)
