"""Pages for the ledger, the legacy markdown store and the recall preview: parse, call, render.

Each page's selector is the one its JSON-RPC method calls, so a filter or a score cannot differ
between the page and the wire. They follow ``panel_view`` like every panel page: a domain error
is the page's error box with its HTTP status (``memory_panel/views/render.py``), never a 500.
"""

from __future__ import annotations

from functools import partial

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory_panel import conf
from memory_panel.errors import PanelError
from memory_panel.selectors.identities import identity_choice, known_identities
from memory_panel.selectors.ledger import SUPPORTED_STORES, ledger_health, ledger_overview, parse_ledger_filters
from memory_panel.selectors.legacy import legacy_markdown_files
from memory_panel.selectors.recall import parse_recall_request, recall_preview
from memory_panel.views.as_of import moment_asked, moment_label
from memory_panel.views.realm_choice import chosen_realm
from memory_panel.views.render import http_status, panel_view, render_page
from memory_panel.visibility import may_read_ledger
from memory_panel.wire.params import query_uint
from access.caller import Access

LEDGER_FILTERS = ("entity", "topic", "store", "query")


def _given(request: HttpRequest, names: tuple[str, ...]) -> dict[str, str]:
    """The non-blank GET params among ``names``: an empty form field means "no filter"."""
    return {name: value for name in names if (value := request.GET.get(name, "").strip())}


@panel_view
def ledger(request: HttpRequest, access: Access) -> HttpResponse:
    filters = _given(request, LEDGER_FILTERS)
    context: dict = {
        "filters": filters,
        "store_names": SUPPORTED_STORES,
        "health_configured": conf.ledger_health_endpoint() is not None,
    }
    status = 200
    try:
        context["ledger"] = ledger_overview(access=access, filters=parse_ledger_filters(filters))
    except PanelError as error:  # shown beside the filter form, so the operator can correct it
        context["error"] = error.message
        status = http_status(error)
    return render_page(request, "memory_panel/ledger.html", "memory_panel/_ledger_results.html", context, status=status)


@panel_view
def ledger_health_fragment(request: HttpRequest, access: Access) -> HttpResponse:
    """Loaded by the ledger page after it renders, so a slow endpoint never delays the page."""
    if not may_read_ledger(access):
        return render(request, "memory_panel/_ledger_health.html", {"denied": True}, status=403)
    endpoint = conf.ledger_health_endpoint()
    health = ledger_health(endpoint=endpoint) if endpoint is not None else None
    return render(request, "memory_panel/_ledger_health.html", {"health": health})


@panel_view
def recall(request: HttpRequest, access: Access) -> HttpResponse:
    given = _given(request, ("identity", "query_text", "max_entries"))
    realm = chosen_realm(request)  # the header's realm choice; none: the realm holding the identity
    identity = identity_choice(access=access, realm=realm, typed=given.get("identity"))
    at_ms = moment_asked(request)  # docs/history.md §4: what recall would have injected then
    context: dict = {
        "as_of": request.GET.get("as_of", "").strip() if at_ms is not None else "",
        "as_of_label": moment_label(at_ms) if at_ms is not None else "",
        "form": given,
        "realm": realm,
        "identity": identity,
        "known_identities": partial(known_identities, access=access, realm=realm),  # read if the form renders
    }
    status = 200
    if identity.identity is not None:
        # docs/search.md §8: "luka" previews identity:luka when that is the identity there is.
        params: dict = {**given, "identity": identity.identity, "realm": realm}
        if (max_entries := query_uint(given.get("max_entries", ""))) is not None:
            params["max_entries"] = max_entries
        try:
            context["preview"] = recall_preview(access=access, request=parse_recall_request(params), at_ms=at_ms)
        except PanelError as error:  # shown beside the form, as on the ledger page
            context["error"] = error.message
            status = http_status(error)
    return render_page(request, "memory_panel/recall.html", "memory_panel/_recall_result.html", context, status=status)


@panel_view
def legacy(request: HttpRequest, access: Access) -> HttpResponse:
    files = legacy_markdown_files(access=access)
    return render_page(request, "memory_panel/legacy.html", "memory_panel/_legacy_files.html", {"files": files})
