"""The ``mobkit/memory/panel/*`` JSON-RPC methods: parse params, call one selector, shape the result."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from memory_panel import selectors
from memory_panel.visibility import REVIEW, can_read_realm_history
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
    parse_scope,
    parse_status,
    param_str,
    record_json,
)
from mobkit_console.rpc.errors import invalid_params
from mobkit_console.rpc.registry import rpc_method

if TYPE_CHECKING:
    from mobkit_console.access.caller import Access

PANEL = "mobkit/memory/panel/"


def _reviewer(access: Access) -> bool:
    return not access.enforced or access.allows(REVIEW)


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


def record_filter(params: dict[str, Any]) -> selectors.RecordFilter:
    """spec §1.2 (a): ``identity`` implies scope identity and that scope key unless they are given."""
    scope = parse_scope(params.get("scope"))
    status = parse_status(params.get("status"))
    identity = param_str(params, "identity")
    scope_key = param_str(params, "scope_key")
    if identity is not None:
        scope = scope or "identity"
        scope_key = scope_key if scope_key is not None else identity
    return selectors.RecordFilter(scope_kind=scope, scope_key=scope_key, status=status)


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


@rpc_method(PANEL + "quarantine", advertised=_reviewer)
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


@rpc_method(PANEL + "dreams", advertised=can_read_realm_history)
def dreams(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    runs, realms = selectors.dream_history(
        access=access, realm=parse_realm(params.get("realm")), limit=_list_limit(params)
    )
    return {"runs": [asdict(run) for run in runs], "realms": realms}


@rpc_method(PANEL + "overview", advertised=can_read_realm_history)
def overview(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    scopes, realms = selectors.scope_holdings(access=access, realm=parse_realm(params.get("realm")))
    return {
        "scopes": [asdict(scope) for scope in scopes],
        "realms": realms,
        "floors": {"records": FLOOR_RECORDS, "bytes": FLOOR_BYTES},
    }


@rpc_method(PANEL + "proposals", advertised=can_read_realm_history)
def proposals(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    rows, realms = selectors.pending_proposals(
        access=access, realm=parse_realm(params.get("realm")), limit=_list_limit(params)
    )
    return {"proposals": [asdict(row) for row in rows], "realms": realms}


@rpc_method(PANEL + "injections", advertised=can_read_realm_history)
def injections(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    rows, realms = selectors.injection_log(
        access=access, realm=parse_realm(params.get("realm")), limit=_list_limit(params)
    )
    return {"injections": [injection_json(row, with_realm=True) for row in rows], "realms": realms}


@rpc_method(PANEL + "harvests", advertised=can_read_realm_history)
def harvests(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    rows, realms = selectors.pending_harvests(
        access=access, realm=parse_realm(params.get("realm")), limit=_list_limit(params)
    )
    return {"harvests": [asdict(row) for row in rows], "realms": realms}


@rpc_method(PANEL + "dream_runs", advertised=can_read_realm_history)
def dream_runs(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    rows, realms = selectors.dream_runs(
        access=access, realm=parse_realm(params.get("realm")), limit=_list_limit(params)
    )
    return {"runs": [asdict(row) for row in rows], "realms": realms}


@rpc_method(PANEL + "audit_verdicts", advertised=can_read_realm_history)
def audit_verdicts(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    rows, realms = selectors.open_audit_verdicts(
        access=access, realm=parse_realm(params.get("realm")), limit=_list_limit(params)
    )
    return {"verdicts": [asdict(row) for row in rows], "realms": realms}
