"""The Memory panel pages (spec console-panel-and-access §4): parse → selectors → render.

A plain request gets the whole page; an HX-Request gets only the block HTMX swaps; a history
restore gets the whole page again (CONTRACT "HTTP routes"). Query parameters are parsed by the
same wire functions as the RPC params, so the page and ``mobkit/memory/panel/*`` agree.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from memory_panel import selectors
from memory_panel.realms import realm_names, store_error_message
from memory_panel.records import MEMORY_KINDS, SCOPE_KINDS, STATUS_KINDS, TRUST_TIERS
from memory_panel.visibility import can_review_quarantine, scope_visible
from memory_panel.wire import (
    LISTS_DEFAULT_LIMIT,
    LISTS_MAX_LIMIT,
    RECORDS_DEFAULT_LIMIT,
    RECORDS_MAX_LIMIT,
    parse_cursor,
    parse_kind,
    parse_limit,
    parse_realm,
    parse_trust,
    record_filter,
    record_json,
)
from mobkit_console.access.caller import Access, access_for_user
from mobkit_console.pages import render_page
from mobkit_console.rpc.errors import ACCESS_DENIED, INTERNAL_ERROR, INVALID_PARAMS, NOT_FOUND, RpcError

# The Records filter state the URL carries; names match the RPC params (CONTRACT "HTTP routes").
RECORD_FILTER_PARAMS = ("realm", "scope", "identity", "scope_key", "status", "kind", "trust", "limit")
_ERROR_STATUS = {INVALID_PARAMS: 400, NOT_FOUND: 404, ACCESS_DENIED: 403, INTERNAL_ERROR: 503}


@dataclass(frozen=True)
class Section:
    """One section's data, or the denial shown in its place: "no grant", never a fake empty (§4)."""

    data: Any = None
    denied: RpcError | None = None


def _section(selector: Callable[..., Any], **kwargs: Any) -> Section:
    try:
        return Section(data=selector(**kwargs))
    except RpcError as error:
        if error.code != ACCESS_DENIED:
            raise
        return Section(denied=error)


def panel_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Sign-in required, GET/HEAD only, ``Vary: HX-Request``, and RpcErrors as clear error pages."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            try:
                return view(request, access_for_user(request.user), *args, **kwargs)
            except DatabaseError as failure:  # a busy, damaged or too-slow realm: say so, no 500
                raise RpcError(INTERNAL_ERROR, store_error_message(failure)) from failure
        except RpcError as error:
            return render(
                request,
                "memory/error.html",
                {"error": error, "denied": error.code == ACCESS_DENIED},
                status=_ERROR_STATUS.get(error.code, 500),
            )

    return login_required(require_safe(vary_on_headers("HX-Request")(wrapper)))


def _page(request: HttpRequest, full: str, fragment: str, context: dict[str, Any]) -> HttpResponse:
    context.setdefault("realm_choices", realm_names())
    return render_page(request, full, fragment, context)


def _query_limit(query: QueryDict, *, default: int, maximum: int) -> int:
    # Query strings carry text; the RPC's rule (a non-negative integer, clamped) applies to its value.
    raw = query.get("limit", "").strip()
    return parse_limit(int(raw) if raw.isascii() and raw.isdigit() else None, default=default, maximum=maximum)


# ---------------------------------------------------------------------------------------------
# Holdings


@panel_view
def holdings(request: HttpRequest, access: Access) -> HttpResponse:
    realm = parse_realm(request.GET.get("realm"))
    overview = _section(selectors.scope_holdings, access=access, realm=realm)
    context = {
        "realm": realm,
        "overview": overview,
        "tables": _holdings_tables(overview.data) if overview.data else [],
        "denied_kinds": [kind for kind in SCOPE_KINDS if not _kind_readable(access, kind)],
        **_holdings_footer(access, realm),
    }
    return _page(request, "memory/holdings.html", "memory/_holdings.html", context)


def _holdings_tables(data: tuple[list[selectors.ScopeHoldings], list[str]]) -> list[tuple[str, list]]:
    """One table per realm, every realm listed (an empty realm shows as empty, not missing)."""
    scopes, realms = data
    return [(name, [s for s in scopes if s.realm == name]) for name in realms]


def _kind_readable(access: Access, kind: str) -> bool:
    """Could any scope of this kind be visible? Identity scopes need a grant on some agent."""
    if kind == "identity":
        return not access.enforced or (
            access.may_perform_anywhere("agent.memory.read") and access.may_perform_anywhere("agent.view")
        )
    return scope_visible(access, kind, "")


def _holdings_footer(access: Access, realm: str | None) -> dict[str, Any]:
    dreams = _section(selectors.dream_history, access=access, realm=realm, limit=1)
    proposals = _section(selectors.pending_proposals, access=access, realm=realm, limit=LISTS_MAX_LIMIT)
    # The queue count is shown to reviewers only (spec §4 Holdings footer); others see no number.
    queue = (
        _section(selectors.quarantine_queue, access=access, realm=realm, limit=RECORDS_MAX_LIMIT)
        if can_review_quarantine(access)
        else None
    )
    return {
        "last_dream": dreams if dreams.denied else Section(data=(dreams.data[0] or [None])[0]),
        "proposals": proposals if proposals.denied else Section(data=proposals.data[0]),
        "queue": queue,
        "queue_cap": RECORDS_MAX_LIMIT,
        "proposals_cap": LISTS_MAX_LIMIT,
    }


# ---------------------------------------------------------------------------------------------
# Records


@panel_view
def records(request: HttpRequest, access: Access) -> HttpResponse:
    params = request.GET.dict()
    realm = parse_realm(params.get("realm"))
    filters = replace(record_filter(params), kind=parse_kind(params.get("kind")), trust=parse_trust(params.get("trust")))
    cursor = parse_cursor(params.get("cursor"))
    limit = _query_limit(request.GET, default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT)
    page = _section(selectors.record_list, access=access, realm=realm, filters=filters, limit=limit, cursor=cursor)
    state = {name: params[name].strip() for name in RECORD_FILTER_PARAMS if params.get(name, "").strip()}
    context = {
        "realm": realm,
        "page": page,
        "claimants": selectors.list_claimant_ids(records=page.data.records) if page.data else set(),
        "state": state,
        "more_url": _more_url(state, page),
        "continued": cursor is not None,
        "choices": {"scope": SCOPE_KINDS, "status": STATUS_KINDS, "kind": MEMORY_KINDS, "trust": TRUST_TIERS},
    }
    # A "load more" request continues the table in place; any other HX request swaps the results.
    fragment = "memory/records/_rows.html" if cursor is not None else "memory/records/_results.html"
    return _page(request, "memory/records/list.html", fragment, context)


def _more_url(state: dict[str, str], page: Section) -> str | None:
    if page.data is None or page.data.next_cursor is None:
        return None
    return "?" + urlencode({**state, "cursor": page.data.next_cursor.encode()})


@panel_view
def record_detail(request: HttpRequest, access: Access, memory_id: str) -> HttpResponse:
    bio = selectors.record_get(access=access, memory_id=memory_id, realm=parse_realm(request.GET.get("realm")))
    context = {
        "realm": bio.realm,
        "bio": bio,
        "record": bio.record,
        "claimants": selectors.claimant_ids(bio.chain),
        "record_json": json.dumps(record_json(bio.record, with_body=True), indent=2, ensure_ascii=False),
        "dreams": _section(selectors.record_dreams, access=access, realm=bio.realm, memory_id=bio.record.id),
    }
    return _page(request, "memory/records/detail.html", "memory/records/_detail.html", context)


# ---------------------------------------------------------------------------------------------
# Quarantine and dreams


@panel_view
def quarantine(request: HttpRequest, access: Access) -> HttpResponse:
    realm = parse_realm(request.GET.get("realm"))
    limit = _query_limit(request.GET, default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT)
    context = {
        "realm": realm,
        "limit": limit,
        "queue": _section(selectors.quarantine_queue, access=access, realm=realm, limit=limit),
    }
    return _page(request, "memory/quarantine.html", "memory/_quarantine.html", context)


@dataclass(frozen=True)
class DreamCard:
    run: selectors.DreamSummary
    sheet: selectors.DreamRunRow | None
    phases: list[Any]
    verdicts: list[tuple[str, int]]
    skips: list[Any]
    raw_detail: str | None  # a sheet whose detail is not the expected JSON object, shown as text


@panel_view
def dreams(request: HttpRequest, access: Access) -> HttpResponse:
    realm = parse_realm(request.GET.get("realm"))
    limit = _query_limit(request.GET, default=LISTS_DEFAULT_LIMIT, maximum=LISTS_MAX_LIMIT)
    history = _section(selectors.dream_history, access=access, realm=realm, limit=limit)
    sheets = _section(selectors.dream_runs, access=access, realm=realm, limit=LISTS_MAX_LIMIT)
    by_run = {(row.realm, row.run_id): row for row in (sheets.data[0] if sheets.data else [])}
    context = {
        "realm": realm,
        "limit": limit,
        "history": history,
        "cards": [_dream_card(run, by_run.get((run.realm, run.run_id))) for run in (history.data or ([], []))[0]],
    }
    return _page(request, "memory/dreams.html", "memory/_dreams.html", context)


def _dream_card(run: selectors.DreamSummary, sheet: selectors.DreamRunRow | None) -> DreamCard:
    detail = sheet.detail if sheet is not None else {}
    if not isinstance(detail, dict):
        return DreamCard(run, sheet, [], [], [], str(detail))
    verdicts = detail.get("verdicts")
    counted = sorted((str(k), v) for k, v in verdicts.items() if v) if isinstance(verdicts, dict) else []
    phases = detail.get("phases")  # a hand-edited sheet may hold anything here
    return DreamCard(
        run,
        sheet,
        phases=[p for p in phases if isinstance(p, list)] if isinstance(phases, list) else [],
        verdicts=counted,
        skips=list(detail.get("skips", [])) if isinstance(detail.get("skips"), list) else [],
        raw_detail=None,
    )
