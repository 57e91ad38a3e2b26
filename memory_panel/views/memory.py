"""The Memory panel pages (docs/ui.md §4): parse → selectors → render.

A plain request gets the whole page; an HX-Request gets only the block HTMX swaps; a history
restore gets the whole page again (docs/wire-contract.md §C.2). Query parameters are parsed by the
same wire functions as the RPC params, so the page and ``mobkit/memory/panel/*`` agree.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.urls import reverse
from django_htmx.http import push_url, replace_url

from memory_panel.cursor import parse_cursor, parse_search_cursor, parse_utility_cursor
from memory_panel.errors import InvalidParams
from memory_panel.search_text import SearchQuery, parse_query
from memory_panel.selectors import biography, charts as chart_selectors, counts, diff as diff_selectors, dreams as dream_selectors
from memory_panel.selectors import holdings as holdings_selectors, pending, quarantine as quarantine_selectors
from memory_panel.selectors import record_utility, records as record_selectors, search as search_selectors
from memory_panel.selectors import replicas as replica_selectors, taint_wall, tiles as tile_selectors
from memory_panel.selectors.dreams import DreamRunRow, DreamSummary
from memory_panel.selectors.named_records import record_titles
from memory_panel.signals import announce, records_searched
from memory_panel.selectors.identities import IdentityChoice, identity_choice, known_identities
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.records import (
    AUTHOR_KINDS, MEMORY_KINDS, SCOPE_KINDS, SCOPE_ORDER, STATUS_KINDS, TRUST_TIERS, MemoryRecord,
)
from memory_panel.templatetags.panel_format import records_url
from memory_panel.views import as_of
from memory_panel.views.charts import chart_sections
from memory_panel.views.realm_choice import chosen_realm
from memory_panel.views.render import Section, count_section, panel_view, render_page, section, wants_fragment
from memory_panel.visibility import can_review_quarantine, scope_kind_readable
from memory_panel.wire.params import (
    LISTS_DEFAULT_LIMIT,
    LISTS_MAX_LIMIT,
    RECORDS_DEFAULT_LIMIT,
    RECORDS_MAX_LIMIT,
    param_str,
    parse_author,
    parse_kind,
    parse_limit,
    parse_realm,
    parse_trust,
    query_uint,
    record_filter,
)
from memory_panel.wire.results import record_json
from access.caller import Access

# The Records filter state the URL carries; names match the RPC params (docs/wire-contract.md §C.2).
# The realm is not among them: it is the operator's realm choice (realm_choice.py), added when one is made.
RECORD_FILTER_PARAMS = (
    "scope", "identity", "scope_key", "status", "kind", "trust", "author", "limit", "q", "sort", "group",
)
# A count only: past RECORDS_MAX_LIMIT a reload shows the first RECORDS_MAX_LIMIT rows and "load more".
SHOWN_MAX = 1_000_000
SORTS = ("recency", "utility")  # docs/panel-tabs.md §3
SCOPE_FILTER_MAX = 200


def parse_sort(raw: str | None) -> str:
    value = (raw or "").strip() or "recency"
    if value not in SORTS:
        raise InvalidParams(f"unknown sort '{value}' (expected recency or utility)")
    return value


def parse_group(raw: str | None) -> bool:
    """``group=scope``: the recency list grouped by scope, as MobKit's panel shows it (docs/daily-use.md §9)."""
    value = (raw or "").strip()
    if value not in ("", "scope"):
        raise InvalidParams(f"unknown group '{value[:80]}' (expected scope, or nothing for newest first)")
    return value == "scope"


def _query_limit(query: QueryDict, *, default: int, maximum: int, name: str = "limit") -> int:
    # Query strings carry text; the RPC's rule (a non-negative integer, clamped) applies to its value.
    return parse_limit(query_uint(query.get(name, "")), default=default, maximum=maximum)


# ---------------------------------------------------------------------------------------------
# Holdings


@panel_view
def holdings(request: HttpRequest, access: Access) -> HttpResponse:
    if (at_ms := as_of.moment_asked(request)) is not None:
        return as_of.holdings_page(request, access, at_ms)
    realm = chosen_realm(request)
    overview = section(holdings_selectors.scope_holdings, access=access, realm=realm)
    # docs/ui.md §4: a realm with many scopes shows those that matter first; the rest by filter or page.
    contains = request.GET.get("scopes", "")[:SCOPE_FILTER_MAX]
    offset = min(query_uint(request.GET.get("scopes_from", "")) or 0, SHOWN_MAX)
    tiles = tile_selectors.verdict_tiles(access=access, realm=realm)
    tables = (
        holdings_selectors.holdings_tables(
            scopes=overview.data[0], realms=overview.data[1], contains=contains, offset=offset
        )
        if overview.data
        else []
    )
    context = {
        "realm": realm,
        "overview": overview,
        "scopes_filter": contains,
        "tables": tables,
        "replica_lags": replica_selectors.replica_lag(realms=_realms_shown(tables)),
        "replica_source_problems": replica_selectors.source_problems(),
        "replicas_uncopied": replica_selectors.uncopied_replicas(),
        "denied_kinds": [kind for kind in SCOPE_KINDS if not scope_kind_readable(access, kind)],
        "tiles": tiles,
        "taint_story": taint_wall.tile_story(access=access, tile=next(t for t in tiles if t.id == "taint-wall")),
        "titles": record_titles(
            access=access, refs=[(item.realm, item.memory_id) for tile in tiles for item in tile.evidence]
        ),
        **_holdings_footer(access, realm),
        **chart_sections(request, access, realm, [
            ("holdings-charts", "Over time", chart_selectors.holdings_charts),
            ("injection-charts", "Injections over time", chart_selectors.injection_charts),
        ]),
    }
    return render_page(request, "memory_panel/holdings.html", "memory_panel/_holdings.html", context)


def _realms_shown(tables: list[holdings_selectors.ScopeTable]) -> list[str]:
    """The realms of the tables, or of the scopes shown in the one table across realms."""
    return sorted({table.realm for table in tables if table.realm is not None}
                  | {scope.realm for table in tables if table.realm is None for scope in table.scopes})


def _holdings_footer(access: Access, realm: str | None) -> dict[str, Any]:
    # The newest durable sheet is one indexed row; rebuilding runs from the audit trail reads
    # 5,000 audit rows, so it is asked only of realms that keep no sheets (older store format).
    dreams = section(dream_selectors.dream_runs, access=access, realm=realm, limit=1)
    if not dreams.denied and not dreams.data[0]:
        dreams = section(dream_selectors.dream_history, access=access, realm=realm, limit=1)
    newest = None if dreams.denied else (dreams.data[0] or [None])[0]
    proposals = section(pending.pending_proposals, access=access, realm=realm, limit=LISTS_MAX_LIMIT)
    # The queue count is shown to reviewers only (docs/ui.md §4 Holdings footer); others see no number.
    # The gate's promotions are listed (no records: limit 0); the queue is counted, not read.
    reviewer = can_review_quarantine(access)
    queue = section(quarantine_selectors.quarantine_queue, access=access, realm=realm, limit=0) if reviewer else None
    queue_count = count_section(counts.quarantine_count, access=access, realm=realm) if reviewer else None
    return {
        "last_dream": dreams if dreams.denied else Section(data=newest and {
            "run_id": newest.run_id,
            "started_ms": getattr(newest, "started_at_ms", None) or getattr(newest, "first_op_at_ms", None),
            "at_ms": getattr(newest, "completed_at_ms", None) or getattr(newest, "last_op_at_ms", None),
        }),
        "proposals": proposals if proposals.denied else Section(data=proposals.data[0]),
        "queue": queue,
        "queue_count": queue_count,
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


def records_query(params: dict[str, str], *, access: Access, realm: str | None) -> RecordsQuery:
    identity = identity_choice(access=access, realm=realm, typed=param_str(params, "identity"))
    if identity.typed is not None:  # docs/search.md §8: "luka" read as "identity:luka"
        params = {**params, "identity": identity.identity}
    filters = replace(
        record_filter(params), kind=parse_kind(params.get("kind")), trust=parse_trust(params.get("trust")),
        author=parse_author(params.get("author")),
    )
    query = parse_query(params["q"]) if params.get("q", "").strip() else None
    return RecordsQuery(realm, filters, query, identity)


def records_state(params: dict[str, str], realm: str | None) -> dict[str, str]:
    """The Records filter state a URL carries: the filters given, and the realm when one is chosen."""
    state = {name: params[name].strip() for name in RECORD_FILTER_PARAMS if params.get(name, "").strip()}
    if realm is not None:
        state["realm"] = realm
    return state


@panel_view
def records(request: HttpRequest, access: Access) -> HttpResponse:
    if (at_ms := as_of.moment_asked(request)) is not None:
        return as_of.records_page(request, access, at_ms)
    params = request.GET.dict()
    asked = records_query(params, access=access, realm=chosen_realm(request))
    realm, filters, query = asked.realm, asked.filters, asked.query
    sort = parse_sort(params.get("sort"))
    limit = _query_limit(request.GET, default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT)
    # ``shown``: the rows already on screen (docs/daily-use.md §2). A first page re-renders that many,
    # so a reload or Back after "load more" shows the same rows; a cursor page counts on from it.
    shown = _query_limit(request.GET, default=0, maximum=SHOWN_MAX, name="shown")
    state = records_state(params, realm)
    if not request.htmx and any(not value.strip() for name, value in request.GET.items() if name != "realm"):
        # A plain form submit sends every field: the URL leaves the empty ones out (``realm=`` is
        # all realms for this page, docs/daily-use.md §3, and no form sends it).
        kept = {name: params[name] for name in ("shown", "cursor") if params.get(name, "").strip()}
        return HttpResponseRedirect(records_url(**state, **kept))
    if query is not None:
        announce(records_searched, access=access, realm=realm, query=query.text, surface="page")
    # The exports and facets of what the list shows: ``realm=`` (all realms, this page only) kept.
    listed_state = {**state, "realm": ""} if realm is None and "realm" in params else state
    read_page, cursor = _records_reader(params, asked, sort)
    fetch = limit if cursor is not None else max(limit, min(shown, RECORDS_MAX_LIMIT))
    page = section(read_page, access=access, realm=realm, filters=filters, limit=fetch, cursor=cursor)
    # docs/daily-use.md §9: newest first; grouped by scope (docs/panel-tabs.md §3) when asked for.
    grouped = sort == "recency" and parse_group(params.get("group"))
    if grouped and page.data is not None:
        page.data.records[:] = _grouped_by_scope(page.data.records, limit)
    before = shown if cursor is not None else 0
    rows = page.data.records if page.data else []
    on_screen = before + len(rows)
    context = {
        "realm": realm,
        "page": page,
        "rows": rows,
        "hits": {(hit.record.realm, hit.record.id): hit for hit in page.data.results} if query and page.data else {},
        "claimants": record_selectors.list_claimant_ids(records=rows),
        "state": state,
        "count": count_section(counts.record_count, access=access, realm=realm, filters=filters, query=query),
        "first_shown": before + 1,
        "last_shown": on_screen,
        "more_url": _more_url(state, page, on_screen),
        "continued": cursor is not None,
        # "Load more" appends rows; the count above the table follows them (docs/daily-use.md §2).
        "loaded_more": cursor is not None and wants_fragment(request),
        "export": {kind: reverse(f"memory-records-{kind}") + _query_string(listed_state) for kind in ("csv", "ndjson")},
        "facets_url": reverse("memory-records-facets") + _query_string(listed_state),
        "identity": asked.identity,
        # A callable, so the template reads the suggestions only when it renders the field: a
        # "load more" or filter fragment has no field and costs no look at the realms' scopes.
        "known_identities": partial(known_identities, access=access, realm=realm),
        "sort": sort,
        "grouped": grouped,
        "choices": {"scope": SCOPE_KINDS, "status": STATUS_KINDS, "kind": MEMORY_KINDS, "trust": TRUST_TIERS,
                    "author": AUTHOR_KINDS},
    }
    # A "load more" request continues the table in place; any other HX request swaps the results.
    fragment = "memory_panel/records/_rows.html" if cursor is not None else "memory_panel/records/_results.html"
    response = render_page(request, "memory_panel/records/list.html", fragment, context)
    if request.htmx and not request.htmx.history_restore_request:
        # Filters and how far the list was loaded, so Back, Forward and reload show these rows. A
        # filter is a step in history; "load more" is not, so it rewrites the current entry.
        set_url = replace_url if cursor is not None else push_url
        set_url(response, records_url(**state, shown=on_screen if on_screen > limit else None))
    return response


def _grouped_by_scope(rows: list[MemoryRecord], page_size: int) -> list[MemoryRecord]:
    """Each page's rows grouped by scope, as MobKit groups what it has loaded: a reload that
    re-renders several pages at once (``shown``) groups them page by page, in the same order."""
    def by_scope(record: MemoryRecord) -> tuple:
        return (SCOPE_ORDER.get(record.scope_kind, len(SCOPE_ORDER)), record.realm, record.scope_key)

    pages = (rows[start : start + page_size] for start in range(0, len(rows), page_size))
    return [record for page in pages for record in sorted(page, key=by_scope)]


def _records_reader(params: dict[str, str], asked: RecordsQuery, sort: str) -> tuple[Callable[..., Any], Any]:
    """The selector a Records request pages through, and its cursor: search ranks its matches
    (docs/search.md §3) whatever the sort; otherwise the utility or the recency order."""
    if asked.query is not None:  # docs/search.md §5: the search box combines with every other filter
        digest = search_selectors.query_digest(asked.query, asked.filters, asked.realm)
        cursor = parse_search_cursor(params.get("cursor"), query_digest=digest)
        return partial(search_selectors.record_search, query=asked.query), cursor
    if sort == "utility":
        return record_utility.record_list_by_utility, parse_utility_cursor(params.get("cursor"))
    return record_selectors.record_list, parse_cursor(params.get("cursor"))


def _query_string(state: dict[str, str]) -> str:
    exported = {name: value for name, value in state.items() if name not in ("limit", "cursor")}
    return "?" + urlencode(exported) if exported else ""


def _more_url(state: dict[str, str], page: Section, on_screen: int) -> str | None:
    if page.data is None or page.data.next_cursor is None:
        return None
    return "?" + urlencode({**state, "shown": on_screen, "cursor": page.data.next_cursor.encode()})


@panel_view
def record_detail(request: HttpRequest, access: Access, memory_id: str) -> HttpResponse:
    if (at_ms := as_of.moment_asked(request)) is not None:
        return as_of.record_page(request, access, memory_id, at_ms)
    bio = biography.record_get(access=access, memory_id=memory_id, realm=parse_realm(request.GET.get("realm")))
    # docs/search.md §7: the lineage step whose change is shown, named in the URL so it can be linked.
    diff = _version_diff(access, bio.realm, request.GET.get("diff", "").strip())
    context = {
        "realm": bio.realm,
        "bio": bio,
        "record": bio.record,
        "claimants": biography.claimant_ids(bio.chain),
        "record_json": json.dumps(record_json(bio.record, with_body=True), indent=2, ensure_ascii=False),
        "dreams": section(dream_selectors.record_dreams, access=access, realm=bio.realm, memory_id=bio.record.id),
        "diff": diff,
        "titles": record_titles(access=access, refs=[(bio.realm, other) for other in _named_by(bio.record, diff)]),
    }
    return render_page(request, "memory_panel/records/detail.html", "memory_panel/records/_detail.html", context)


def _named_by(record: MemoryRecord, diff: Section | None) -> list[str]:
    """The other records a biography names by title (docs/daily-use.md §7).

    The lineage is not among them: its links are records ``supersede_chain`` already read and
    filtered by visibility, so they carry their own titles.
    """
    named = [record.supersedes or "", *record.derived_from]
    if record.status == "superseded":
        named.append(record.status_detail or "")
    if diff is not None and diff.data is not None:
        named += [diff.data.prior.id, diff.data.version.id]
    return [memory_id for memory_id in named if memory_id]


def _version_diff(access: Access, realm: str, memory_id: str) -> Section | None:
    if not memory_id:
        return None
    return section(diff_selectors.version_diff, access=access, realm=realm, memory_id=memory_id)


# ---------------------------------------------------------------------------------------------
# Quarantine and dreams


@panel_view
def quarantine(request: HttpRequest, access: Access) -> HttpResponse:
    realm = chosen_realm(request)
    limit = _query_limit(request.GET, default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT)
    order = quarantine_selectors.parse_queue_order(request.GET.get("order"))
    context = {
        "realm": realm,
        **quarantine_context(access=access, realm=realm, limit=limit, order=order),
        **chart_sections(request, access, realm, [("quarantine-charts", "Over time", chart_selectors.quarantine_charts)]),
    }
    return render_page(request, "memory_panel/quarantine.html", "memory_panel/_quarantine.html", context)


def quarantine_context(*, access: Access, realm: str | None, limit: int, order: str) -> dict[str, Any]:
    """What ``_quarantine.html`` shows, on the Quarantine page and in Pipeline's queue section."""
    queue = section(
        quarantine_selectors.quarantine_queue, access=access, realm=realm, limit=limit, order=order, with_previews=True
    )
    rows = [(r, queue.data.previews.get((r.realm, r.id), "")) for r in queue.data.records] if queue.data else []
    named = [(r.realm, r.supersedes) for r, _ in rows if r.supersedes]
    # The page lists the oldest ``limit`` promotions, as many as the queue's rows, and counts the rest:
    # every realm's gate at once would be megabytes across hundreds of realms.
    promotions = queue.data.pending_promotions if queue.data else []
    promotions_shown = sorted(promotions, key=lambda p: (p.created_at_ms, p.pending_id))[:limit]
    named += [(p.realm, p.record_id) for p in promotions_shown]
    return {
        "limit": limit,
        "order": order,
        "queue": queue,
        "rows": rows,
        "promotions_shown": promotions_shown,
        "promotions_more": len(promotions) - len(promotions_shown),
        "titles": record_titles(access=access, refs=named),
        "count": count_section(counts.quarantine_count, access=access, realm=realm),
    }


@dataclass(frozen=True)
class DreamCard:
    run: DreamSummary
    sheet: DreamRunRow | None
    phases: list[Any]
    verdicts: list[tuple[str, int]]
    skips: list[Any]
    raw_detail: str | None  # a sheet whose detail is not the expected JSON object, shown as text
    running: bool = False  # docs/timeline-live.md §2: no sheet yet, and not quiet for long


@panel_view
def dreams(request: HttpRequest, access: Access) -> HttpResponse:
    realm = chosen_realm(request)
    limit = _query_limit(request.GET, default=LISTS_DEFAULT_LIMIT, maximum=LISTS_MAX_LIMIT)
    history = section(dream_selectors.dream_history, access=access, realm=realm, limit=limit)
    sheets = section(dream_selectors.dream_runs, access=access, realm=realm, limit=LISTS_MAX_LIMIT)
    by_run = {(row.realm, row.run_id): row for row in (sheets.data[0] if sheets.data else [])}
    running = section(dream_selectors.running_dreams, access=access, realm=realm)
    running_runs = running.data[0] if running.data else []
    now_running = {(run.realm, run.run_id) for run in running_runs}
    runs = (history.data or ([], []))[0]
    context = {
        "realm": realm,
        "limit": limit,
        "history": history,
        "running": running_runs,
        "cards": [
            _dream_card(run, by_run.get((run.realm, run.run_id)), running=(run.realm, run.run_id) in now_running)
            for run in runs
        ],
        "titles": record_titles(
            access=access, refs=[(run.realm, memory_id) for run in runs for memory_id in run.memory_ids]
        ),
        **chart_sections(request, access, realm, [("dream-charts", "Over time", chart_selectors.dream_charts)]),
    }
    return render_page(request, "memory_panel/dreams.html", "memory_panel/_dreams.html", context)


def _dream_card(run: DreamSummary, sheet: DreamRunRow | None, *, running: bool) -> DreamCard:
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
        running=running,
    )
