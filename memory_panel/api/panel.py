"""The ``mobkit/memory/panel/*`` methods: parse params, call one selector, shape the result."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from memory_panel.api.method import ApiMethod
from memory_panel.cursor import parse_cursor
from memory_panel.errors import InvalidParams
from memory_panel.selectors import biography, dreams, holdings, injections, pending, quarantine, records
from memory_panel.visibility import can_read_realm_history, can_review_quarantine
from memory_panel.wire.params import (
    FLOOR_BYTES,
    FLOOR_RECORDS,
    LISTS_DEFAULT_LIMIT,
    LISTS_MAX_LIMIT,
    RECORDS_DEFAULT_LIMIT,
    RECORDS_MAX_LIMIT,
    param_str,
    parse_limit,
    parse_realm,
    record_filter,
)
from memory_panel.wire.results import (
    audit_verdict_json,
    dream_run_json,
    dream_summary_json,
    harvest_json,
    injection_json,
    pending_promotion_json,
    proposal_json,
    record_json,
    scope_holdings_json,
)

if TYPE_CHECKING:
    from access.caller import Access

PANEL = "mobkit/memory/panel/"


def panel_records(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    page = records.record_list(
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


def panel_record(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    memory_id = param_str(params, "memory_id")
    if memory_id is None:
        raise InvalidParams("memory_id is required")
    bio = biography.record_get(access=access, memory_id=memory_id, realm=parse_realm(params.get("realm")))
    return {
        "realm": bio.realm,
        "record": record_json(bio.record, with_body=True),
        "chain": [record_json(link, with_body=False) for link in bio.chain],
        "injections": [injection_json(row, with_realm=False) for row in bio.injections],
    }


def panel_quarantine(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    queue = quarantine.quarantine_queue(
        access=access,
        realm=parse_realm(params.get("realm")),
        limit=parse_limit(params.get("limit"), default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT),
    )
    return {
        "records": [record_json(r, with_body=False) for r in queue.records],
        "pending_promotions": [pending_promotion_json(p) for p in queue.pending_promotions],
        "realms": queue.realms,
    }


def panel_overview(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    scopes, realms = holdings.scope_holdings(access=access, realm=parse_realm(params.get("realm")))
    return {
        "scopes": [scope_holdings_json(scope) for scope in scopes],
        "realms": realms,
        "floors": {"records": FLOOR_RECORDS, "bytes": FLOOR_BYTES},
    }


def _realm_list(
    name: str, selector: Callable[..., tuple[list, list[str]]], key: str, row_json: Callable[[Any], dict]
) -> ApiMethod:
    """A realm-wide list: unscoped agent.memory.read, ``realm?`` and ``limit`` 20/100 (docs/wire-contract.md §1.3)."""

    def handler(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
        limit = parse_limit(params.get("limit"), default=LISTS_DEFAULT_LIMIT, maximum=LISTS_MAX_LIMIT)
        rows, realms = selector(access=access, realm=parse_realm(params.get("realm")), limit=limit)
        return {key: [row_json(row) for row in rows], "realms": realms}

    return ApiMethod(PANEL + name, handler, can_read_realm_history)


METHODS = (
    ApiMethod(PANEL + "records", panel_records),
    ApiMethod(PANEL + "record", panel_record),
    ApiMethod(PANEL + "quarantine", panel_quarantine, can_review_quarantine),
    ApiMethod(PANEL + "overview", panel_overview, can_read_realm_history),
    _realm_list("dreams", dreams.dream_history, "runs", dream_summary_json),
    _realm_list("proposals", pending.pending_proposals, "proposals", proposal_json),
    _realm_list("injections", injections.injection_log, "injections", partial(injection_json, with_realm=True)),
    _realm_list("harvests", pending.pending_harvests, "harvests", harvest_json),
    _realm_list("dream_runs", dreams.dream_runs, "runs", dream_run_json),
    _realm_list("audit_verdicts", dreams.open_audit_verdicts, "verdicts", audit_verdict_json),
)
