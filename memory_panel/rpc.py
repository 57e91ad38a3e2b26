"""The ``mobkit/memory/panel/*`` JSON-RPC methods: parse params, call one selector, shape the result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from typing import TYPE_CHECKING, Any

from memory_panel import selectors
from memory_panel.visibility import can_read_realm_history, can_review_quarantine
from memory_panel.wire import (
    LISTS_DEFAULT_LIMIT,
    LISTS_MAX_LIMIT,
    RECORDS_DEFAULT_LIMIT,
    RECORDS_MAX_LIMIT,
    FLOOR_BYTES,
    FLOOR_RECORDS,
    injection_json,
    parse_cursor,
    parse_limit,
    parse_realm,
    param_str,
    record_filter,
    record_json,
)
from mobkit_console.rpc.errors import invalid_params
from mobkit_console.rpc.registry import rpc_method

if TYPE_CHECKING:
    from mobkit_console.access.caller import Access

PANEL = "mobkit/memory/panel/"


def _list_limit(params: dict[str, Any]) -> int:
    return parse_limit(params.get("limit"), default=LISTS_DEFAULT_LIMIT, maximum=LISTS_MAX_LIMIT)


@rpc_method(PANEL + "records")
def records(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    page = selectors.record_list(
        access=access,
        realm=parse_realm(params.get("realm")),
        filters=record_filter(params),
        limit=parse_limit(params.get("limit"), default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT),
        cursor=parse_cursor(params.get("cursor")),
    )
    return {
        "records": [record_json(r, with_body=False) for r in page.records],
        "next_cursor": page.next_cursor.encode() if page.next_cursor else None,
        "realms": page.realms,
    }


@rpc_method(PANEL + "record")
def record(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    memory_id = param_str(params, "memory_id")
    if memory_id is None:
        raise invalid_params("memory_id is required")
    bio = selectors.record_get(access=access, memory_id=memory_id, realm=parse_realm(params.get("realm")))
    return {
        "realm": bio.realm,
        "record": record_json(bio.record, with_body=True),
        "chain": [record_json(link, with_body=False) for link in bio.chain],
        "injections": [injection_json(row, with_realm=False) for row in bio.injections],
    }


@rpc_method(PANEL + "quarantine", advertised=can_review_quarantine)
def quarantine(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    queue = selectors.quarantine_queue(
        access=access,
        realm=parse_realm(params.get("realm")),
        limit=parse_limit(params.get("limit"), default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT),
    )
    return {
        "records": [record_json(r, with_body=False) for r in queue.records],
        "pending_promotions": [asdict(p) for p in queue.pending_promotions],
        "realms": queue.realms,
    }


@rpc_method(PANEL + "overview", advertised=can_read_realm_history)
def overview(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    scopes, realms = selectors.scope_holdings(access=access, realm=parse_realm(params.get("realm")))
    return {
        "scopes": [asdict(scope) for scope in scopes],
        "realms": realms,
        "floors": {"records": FLOOR_RECORDS, "bytes": FLOOR_BYTES},
    }


def _realm_list_method(
    name: str, selector: Callable[..., tuple[list, list[str]]], key: str, row_json: Callable[[Any], dict] = asdict
) -> None:
    """Register a realm-wide list: unscoped agent.memory.read, ``realm?`` and ``limit`` 20/100 (§1.3)."""

    @rpc_method(PANEL + name, advertised=can_read_realm_history)
    def method(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
        rows, realms = selector(access=access, realm=parse_realm(params.get("realm")), limit=_list_limit(params))
        return {key: [row_json(row) for row in rows], "realms": realms}


_realm_list_method("dreams", selectors.dream_history, "runs")
_realm_list_method("proposals", selectors.pending_proposals, "proposals")
_realm_list_method("injections", selectors.injection_log, "injections", partial(injection_json, with_realm=True))
_realm_list_method("harvests", selectors.pending_harvests, "harvests")
_realm_list_method("dream_runs", selectors.dream_runs, "runs")
_realm_list_method("audit_verdicts", selectors.open_audit_verdicts, "verdicts")
