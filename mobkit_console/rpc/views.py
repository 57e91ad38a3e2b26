"""``POST /console/rpc``: JSON-RPC 2.0 with MobKit's envelopes and status codes.

Written by hand rather than with a JSON-RPC library because MobKit's exact behaviour (HTTP 401 for
an unauthenticated call, -32030 with data at HTTP 200, its messages) is the contract.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from memory_panel.errors import AccessDenied, PanelError
from memory_panel.signals import access_denied, announce
from memory_panel.store.realms import store_failed
from access.caller import Access, access_for
from mobkit_console.accounts.middleware import token_from_request
from mobkit_console.jsonbody import JsonBodyError, json_loads_strict
from mobkit_console.observability import metrics, tracing
from mobkit_console.observability.logs import REALM_LOGGED_CHARS, request_context_bind
from mobkit_console.origins import console_origin
from mobkit_console.rpc.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcError,
    request_budget_exhausted,
    rpc_error_for,
)
from mobkit_console.rpc.registry import method_get

logger = logging.getLogger("mobkit_console.rpc")

UNAUTHORIZED = "unauthorized: console rpc requires a valid auth token"
CROSS_ORIGIN = (
    "cross-origin request refused: a call signed in by the session cookie must come from the console's own origin"
)
MAX_BATCH = 100


@csrf_exempt  # every method only reads, and token-carrying programs have no CSRF cookie to send
@require_POST
def rpc_endpoint(request: HttpRequest) -> HttpResponse:
    try:
        raw = request.body
    except RequestDataTooBig:
        return _error_response(None, INVALID_REQUEST, "request body too large", status=413)
    try:
        payload, refused = _parse_body(raw), None
    except RpcError as error:
        payload, refused = None, error
    if not request.caller.is_signed_in:
        return _unauthorized(payload.get("id") if isinstance(payload, dict) else None)
    if not _caller_origin_allowed(request):
        return _error_response(None, INVALID_REQUEST, CROSS_ORIGIN, status=403)
    if refused is not None:
        return JsonResponse(_error_body(None, refused))

    access = access_for(request.caller)
    if isinstance(payload, list):
        if not payload:
            return _error_response(None, INVALID_REQUEST, "Invalid Request")
        if len(payload) > MAX_BATCH:
            return _error_response(
                None, INVALID_REQUEST, f"Invalid Request: a batch holds at most {MAX_BATCH} calls"
            )
        replies = [reply for reply in _dispatch_batch(payload, access) if reply is not None]
        return JsonResponse(replies, safe=False) if replies else HttpResponse(status=204)
    reply = _dispatch(payload, access)
    return JsonResponse(reply) if reply is not None else HttpResponse(status=204)


def _caller_origin_allowed(request: HttpRequest) -> bool:
    """A browser sends the session cookie with any site's POST (a form, or fetch with text/plain
    needs no preflight), so a call signed in by the cookie runs only from the console's own origin
    (docs/wire-contract.md §C.1). A bearer token is never sent by a browser on its own: any origin.
    A request with no Origin is no cross-site browser request."""
    origin = request.headers.get("Origin")
    if origin is None or token_from_request(request) is not None:
        return True
    served = f"{request.scheme}://{request.get_host()}"
    return console_origin(origin, served=served, allowed=settings.MOBKIT_ALLOWED_ORIGINS)


def _parse_body(raw: bytes) -> Any:
    """The body's JSON; RpcError -32700 for text that is not JSON, -32600 naming the field for JSON
    the console cannot answer (NaN, a lone surrogate, deep nesting: see jsonbody)."""
    try:
        return json_loads_strict(raw)
    except JsonBodyError as error:
        where = error.field(single="request", batch="batch")
        raise RpcError(INVALID_REQUEST, f"Invalid Request: {where}: {error.problem}") from error
    except ValueError as error:  # UnicodeDecodeError included
        raise RpcError(PARSE_ERROR, "Parse error") from error


def _dispatch_batch(calls: list[Any], access: Access) -> Iterator[dict[str, Any] | None]:
    """The batch's calls in order, within the request's time budget (MOBKIT_RPC_REQUEST_BUDGET_MS).

    A running call is never interrupted (each realm query has its own deadline), so the first call
    always runs; once the budget is spent, the rest are answered without being run.
    """
    budget_ms = settings.MOBKIT_RPC_REQUEST_BUDGET_MS
    deadline = time.monotonic() + budget_ms / 1000
    for position, call in enumerate(calls):
        spent = position > 0 and time.monotonic() >= deadline
        yield _dispatch(call, access, refused=request_budget_exhausted(budget_ms) if spent else None)


def _dispatch(call: Any, access: Access, *, refused: RpcError | None = None) -> dict[str, Any] | None:
    """One request object → its response object, or None for a notification; ``refused`` answers a
    valid call with that error instead of running it.

    Each call is counted, timed and traced under its method's name, one the registry does not know
    being ``other`` (callers choose the names; docs/serving.md §8).
    """
    name = call.get("method") if isinstance(call, dict) else None
    method = name if isinstance(name, str) and method_get(name) is not None else metrics.OTHER_METHOD
    started = time.perf_counter()
    with tracing.span(f"rpc {method}", {"rpc.system": "jsonrpc", "rpc.method": method}):
        reply = _reply(call, access, refused)
    metrics.rpc_calls.labels(method, str(reply["error"]["code"]) if "error" in reply else "ok").inc()
    metrics.rpc_call_duration.labels(method).observe(time.perf_counter() - started)
    is_notification = _well_formed(call) and "id" not in call
    return None if is_notification else reply


def _well_formed(call: Any) -> bool:
    return (
        isinstance(call, dict)
        and call.get("jsonrpc") == "2.0"
        and isinstance(call.get("method"), str)
        and _valid_id(call.get("id"))
    )


def _reply(call: Any, access: Access, refused: RpcError | None) -> dict[str, Any]:
    """The response object a call gets, a notification's included (it is then not sent)."""
    if not _well_formed(call):
        request_id = call.get("id") if isinstance(call, dict) and _valid_id(call.get("id")) else None
        return _error_body(request_id, RpcError(INVALID_REQUEST, "Invalid Request"))
    request_id = call.get("id")
    params = call.get("params")
    if isinstance(params, dict) and isinstance(params.get("realm"), str):
        request_context_bind(realm=params["realm"][:REALM_LOGGED_CHARS])
    try:
        if refused is not None:
            raise refused
        result = _call(call["method"], params, access)
    except RpcError as error:
        return _error_body(request_id, error)
    except PanelError as error:
        if isinstance(error, AccessDenied):
            announce(access_denied, access=access, action=error.action, resource=error.resource)
        return _error_body(request_id, rpc_error_for(error))
    except DatabaseError as error:
        # docs/wire-contract.md §1.5: MobKit's mapping is unknown; store failures read as internal errors.
        logger.warning("store error in %s: %s", call["method"], error)
        return _error_body(request_id, rpc_error_for(store_failed(error)))
    except Exception:
        # A bug must still answer in the JSON-RPC envelope, never with Django's HTML error page.
        logger.exception("unexpected error in %s", call["method"])
        return _error_body(request_id, RpcError(INTERNAL_ERROR, "Internal error"))
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
