"""The Memory panel pages (docs/ui.md §4): parse → selectors → render.

A plain request gets the whole page; an HX-Request gets only the block HTMX swaps; a history
restore gets the whole page again (docs/wire-contract.md §C.2). Query parameters are parsed by the
same wire functions as the RPC params, so the page and ``mobkit/memory/panel/*`` agree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import reverse

from memory_panel.cursor import parse_cursor, parse_search_cursor
from memory_panel.selectors import biography, dreams as dream_selectors, holdings as holdings_selectors
from memory_panel.search_text import SearchQuery, parse_query
from memory_panel.selectors import counts, diff as diff_selectors
from memory_panel.selectors import pending, quarantine as quarantine_selectors, records as record_selectors
from memory_panel.selectors import search as search_selectors
from memory_panel.selectors.dreams import DreamRunRow, DreamSummary
from memory_panel.selectors.holdings import ScopeHoldings
from memory_panel.selectors.identities import IdentityChoice, identity_choice, known_identities
from memory_panel.store.realms import realm_names
from memory_panel.store.records import MEMORY_KINDS, SCOPE_KINDS, STATUS_KINDS, TRUST_TIERS
from memory_panel.views.render import Section, panel_view, render_page, section
from memory_panel.visibility import can_review_quarantine, scope_kind_readable
from memory_panel.wire.params import (
    LISTS_DEFAULT_LIMIT,
    LISTS_MAX_LIMIT,
    RECORDS_DEFAULT_LIMIT,
    RECORDS_MAX_LIMIT,
    RecordFilter,
    param_str,
    parse_kind,
    parse_limit,
    parse_realm,
    parse_trust,
    query_uint,
    record_filter,
)
from memory_panel.wire.results import record_json
from mobkit_console.access.caller import Access

# The Records filter state the URL carries; names match the RPC params (docs/wire-contract.md §C.2).
RECORD_FILTER_PARAMS = ("realm", "scope", "identity", "scope_key", "status", "kind", "trust", "limit", "q")


def _page(request: HttpRequest, full: str, fragment: str, context: dict[str, Any]) -> HttpResponse:
    context.setdefault("realm_choices", realm_names())
    return render_page(request, full, fragment, context)


def _query_limit(query: QueryDict, *, default: int, maximum: int) -> int:
    # Query strings carry text; the RPC's rule (a non-negative integer, clamped) applies to its value.
    return parse_limit(query_uint(query.get("limit", "")), default=default, maximum=maximum)


# ---------------------------------------------------------------------------------------------
# Holdings


@panel_view
def holdings(request: HttpRequest, access: Access) -> HttpResponse:
    realm = parse_realm(request.GET.get("realm"))
    overview = section(holdings_selectors.scope_holdings, access=access, realm=realm)
    context = {
        "realm": realm,
        "overview": overview,
        "tables": _holdings_tables(overview.data) if overview.data else [],
        "denied_kinds": [kind for kind in SCOPE_KINDS if not scope_kind_readable(access, kind)],
        **_holdings_footer(access, realm),
    }
    return _page(request, "memory_panel/holdings.html", "memory_panel/_holdings.html", context)


def _holdings_tables(data: tuple[list[ScopeHoldings], list[str]]) -> list[tuple[str, list]]:
    """One table per realm, every realm listed (an empty realm shows as empty, not missing)."""
    scopes, realms = data
    return [(name, [s for s in scopes if s.realm == name]) for name in realms]


def _holdings_footer(access: Access, realm: str | None) -> dict[str, Any]:
    dreams = section(dream_selectors.dream_history, access=access, realm=realm, limit=1)
    proposals = section(pending.pending_proposals, access=access, realm=realm, limit=LISTS_MAX_LIMIT)
    # The queue count is shown to reviewers only (docs/ui.md §4 Holdings footer); others see no number.
    queue = (
        section(quarantine_selectors.quarantine_queue, access=access, realm=realm, limit=RECORDS_MAX_LIMIT)
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


@dataclass(frozen=True)
class RecordsQuery:
    """What the Records page and its exports were asked for (same parameters, same meaning)."""

    realm: str | None
    filters: RecordFilter
    query: SearchQuery | None
    identity: IdentityChoice


def records_query(params: dict[str, str]) -> RecordsQuery:
    realm = parse_realm(params.get("realm"))
    identity = identity_choice(realm=realm, typed=param_str(params, "identity"))
    if identity.typed is not None:  # docs/search.md §8: "luka" read as "identity:luka"
        params = {**params, "identity": identity.identity}
    filters = replace(record_filter(params), kind=parse_kind(params.get("kind")), trust=parse_trust(params.get("trust")))
    query = parse_query(params["q"]) if params.get("q", "").strip() else None
    return RecordsQuery(realm, filters, query, identity)


@panel_view
def records(request: HttpRequest, access: Access) -> HttpResponse:
    params = request.GET.dict()
    asked = records_query(params)
    realm, filters, query = asked.realm, asked.filters, asked.query
    limit = _query_limit(request.GET, default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT)
    if query is not None:  # docs/search.md §5: the search box combines with every other filter
        digest = search_selectors.query_digest(query, filters, realm)
        cursor = parse_search_cursor(params.get("cursor"), query_digest=digest)
        page = section(
            search_selectors.record_search, access=access, realm=realm, query=query, filters=filters, limit=limit,
            cursor=cursor,
        )
    else:
        cursor = parse_cursor(params.get("cursor"))
        page = section(
            record_selectors.record_list, access=access, realm=realm, filters=filters, limit=limit, cursor=cursor
        )
    state = {name: params[name].strip() for name in RECORD_FILTER_PARAMS if params.get(name, "").strip()}
    shown = _shown_before(request.GET) if cursor is not None else 0
    rows = page.data.records if page.data else []
    context = {
        "realm": realm,
        "page": page,
        "rows": rows,
        "hits": {(hit.record.realm, hit.record.id): hit for hit in page.data.results} if query and page.data else {},
        "claimants": record_selectors.list_claimant_ids(records=rows),
        "state": state,
        "count": section(counts.record_count, access=access, realm=realm, filters=filters, query=query),
        "first_shown": shown + 1,
        "last_shown": shown + len(rows),
        "more_url": _more_url(state, page, shown + len(rows)),
        "continued": cursor is not None,
        "export": {kind: reverse(f"memory-records-{kind}") + _query_string(state) for kind in ("csv", "ndjson")},
        "identity": asked.identity,
        "known_identities": known_identities(access=access, realm=realm),
        "choices": {"scope": SCOPE_KINDS, "status": STATUS_KINDS, "kind": MEMORY_KINDS, "trust": TRUST_TIERS},
    }
    # A "load more" request continues the table in place; any other HX request swaps the results.
    fragment = "memory_panel/records/_rows.html" if cursor is not None else "memory_panel/records/_results.html"
    return _page(request, "memory_panel/records/list.html", fragment, context)


def _shown_before(query: QueryDict) -> int:
    # How many rows earlier pages showed, for "51–100 of 1,284"; carried by "load more" links.
    raw = query.get("shown", "").strip()
    return int(raw) if raw.isascii() and raw.isdigit() else 0


def _query_string(state: dict[str, str]) -> str:
    exported = {name: value for name, value in state.items() if name not in ("limit", "cursor")}
    return "?" + urlencode(exported) if exported else ""


def _more_url(state: dict[str, str], page: Section, shown: int) -> str | None:
    if page.data is None or page.data.next_cursor is None:
        return None
    return "?" + urlencode({**state, "cursor": page.data.next_cursor.encode(), "shown": shown})


@panel_view
def record_detail(request: HttpRequest, access: Access, memory_id: str) -> HttpResponse:
    bio = biography.record_get(access=access, memory_id=memory_id, realm=parse_realm(request.GET.get("realm")))
    context = {
        "realm": bio.realm,
        "bio": bio,
        "record": bio.record,
        "claimants": biography.claimant_ids(bio.chain),
        "record_json": json.dumps(record_json(bio.record, with_body=True), indent=2, ensure_ascii=False),
        "dreams": section(dream_selectors.record_dreams, access=access, realm=bio.realm, memory_id=bio.record.id),
        # docs/search.md §7: the lineage step whose change is shown, named in the URL so it can be linked.
        "diff": _version_diff(access, bio.realm, request.GET.get("diff", "").strip()),
    }
    return _page(request, "memory_panel/records/detail.html", "memory_panel/records/_detail.html", context)


def _version_diff(access: Access, realm: str, memory_id: str) -> Section | None:
    if not memory_id:
        return None
    return section(diff_selectors.version_diff, access=access, realm=realm, memory_id=memory_id)


# ---------------------------------------------------------------------------------------------
# Quarantine and dreams


@panel_view
def quarantine(request: HttpRequest, access: Access) -> HttpResponse:
    realm = parse_realm(request.GET.get("realm"))
    limit = _query_limit(request.GET, default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT)
    context = {
        "realm": realm,
        "limit": limit,
        "queue": section(quarantine_selectors.quarantine_queue, access=access, realm=realm, limit=limit),
        "count": section(counts.quarantine_count, access=access, realm=realm),
    }
    return _page(request, "memory_panel/quarantine.html", "memory_panel/_quarantine.html", context)


@dataclass(frozen=True)
class DreamCard:
    run: DreamSummary
    sheet: DreamRunRow | None
    phases: list[Any]
    verdicts: list[tuple[str, int]]
    skips: list[Any]
    raw_detail: str | None  # a sheet whose detail is not the expected JSON object, shown as text


@panel_view
def dreams(request: HttpRequest, access: Access) -> HttpResponse:
    realm = parse_realm(request.GET.get("realm"))
    limit = _query_limit(request.GET, default=LISTS_DEFAULT_LIMIT, maximum=LISTS_MAX_LIMIT)
    history = section(dream_selectors.dream_history, access=access, realm=realm, limit=limit)
    sheets = section(dream_selectors.dream_runs, access=access, realm=realm, limit=LISTS_MAX_LIMIT)
    by_run = {(row.realm, row.run_id): row for row in (sheets.data[0] if sheets.data else [])}
    context = {
        "realm": realm,
        "limit": limit,
        "history": history,
        "cards": [_dream_card(run, by_run.get((run.realm, run.run_id))) for run in (history.data or ([], []))[0]],
    }
    return _page(request, "memory_panel/dreams.html", "memory_panel/_dreams.html", context)


def _dream_card(run: DreamSummary, sheet: DreamRunRow | None) -> DreamCard:
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
