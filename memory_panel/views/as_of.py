"""The pages at ``?as_of=<ISO 8601 date-time>``: Records, a record, Holdings and Knowledge as they stood
(docs/history.md §4). The plain pages hand a request carrying ``as_of`` to these views."""

from __future__ import annotations

import datetime
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse

from memory_panel.cursor import parse_moment_cursor
from memory_panel.selectors import as_of as as_of_selectors
from memory_panel.selectors.identities import identity_choice
from memory_panel.store.records import STATUS_KINDS
from memory_panel.views.realm_choice import chosen_realm
from memory_panel.views.render import render_page, section
from memory_panel.wire.params import (
    RECORDS_DEFAULT_LIMIT,
    RECORDS_MAX_LIMIT,
    param_str,
    parse_kind,
    parse_limit,
    parse_moment,
    parse_realm,
    parse_scope,
    parse_status,
    query_uint,
)
from access.caller import Access

RECORDS_AS_OF_PARAMS = ("as_of", "status", "scope", "scope_key", "kind", "limit")


def moment_asked(request: HttpRequest) -> int | None:
    """The ``as_of`` moment in epoch ms, None when not asked; a bad one is a 400 naming it."""
    return parse_moment(request.GET.get("as_of"), "as_of")


def moment_label(at_ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(at_ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _context(request: HttpRequest, at_ms: int, realm: str | None) -> dict:
    return {"realm": realm, "at_ms": at_ms, "as_of": request.GET.get("as_of", "").strip(),
            "as_of_label": moment_label(at_ms)}


def records_page(request: HttpRequest, access: Access, at_ms: int) -> HttpResponse:
    params = request.GET.dict()
    realm = chosen_realm(request)
    limit = parse_limit(query_uint(params.get("limit", "")), default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT)
    page = section(
        as_of_selectors.records_as_of, access=access, realm=realm, at_ms=at_ms,
        status=parse_status(params.get("status")), scope_kind=parse_scope(params.get("scope")),
        scope_key=param_str(params, "scope_key"), kind=parse_kind(params.get("kind")), limit=limit,
        cursor=parse_moment_cursor(params.get("cursor")),
    )
    state = {name: params[name].strip() for name in RECORDS_AS_OF_PARAMS if params.get(name, "").strip()}
    more = page.data.next_cursor if page.data else None
    context = {
        **_context(request, at_ms, realm),
        "page": page,
        "state": state,
        "statuses": STATUS_KINDS,
        "more_url": "?" + urlencode({**state, "cursor": more.encode()}) if more else None,
    }
    return render_page(request, "memory_panel/as_of/records.html", "memory_panel/as_of/records.html", context)


def record_page(request: HttpRequest, access: Access, memory_id: str, at_ms: int) -> HttpResponse:
    found = as_of_selectors.record_as_of(access=access, realm=parse_realm(request.GET.get("realm")),
                                         memory_id=memory_id, at_ms=at_ms)
    context = {**_context(request, at_ms, found.realm), "found": found, "memory_id": memory_id}
    return render_page(request, "memory_panel/as_of/record.html", "memory_panel/as_of/record.html", context)


def holdings_page(request: HttpRequest, access: Access, at_ms: int) -> HttpResponse:
    realm = chosen_realm(request)
    scopes = section(as_of_selectors.holdings_as_of, access=access, realm=realm, at_ms=at_ms)
    context = {**_context(request, at_ms, realm), "scopes": scopes}
    return render_page(request, "memory_panel/as_of/holdings.html", "memory_panel/as_of/holdings.html", context)


def knowledge_page(request: HttpRequest, access: Access, at_ms: int) -> HttpResponse:
    realm = chosen_realm(request)
    typed = request.GET.get("identity", "").strip() or None
    identity = identity_choice(access=access, realm=realm, typed=typed).identity
    lens = section(as_of_selectors.knowledge_as_of, access=access, realm=realm, identity=identity, at_ms=at_ms) \
        if identity else None
    context = {**_context(request, at_ms, realm), "lens": lens, "identity": identity}
    return render_page(request, "memory_panel/as_of/knowledge.html", "memory_panel/as_of/knowledge.html", context)
