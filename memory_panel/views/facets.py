"""Facets on Records (docs/realm-index.md §11): the JSON and the block the Records page loads beside its list.

Both take the Records page's own query parameters (``records_query``), so a facet counts exactly
the rows of the list it sits beside; the page loads the block after the list (htmx ``load``), so
the list never waits for its counts.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from access.caller import Access
from memory_panel.errors import AccessDenied, InvalidParams
from memory_panel.signals import access_denied, announce
from memory_panel.selectors.facets import FACET_FIELDS, Facets, record_facets
from memory_panel.store.records import AUTHOR_KINDS
from memory_panel.templatetags.panel_format import records_url
from memory_panel.views.memory import records_query, records_state
from memory_panel.views.realm_choice import chosen_realm
from memory_panel.views.render import panel_view

# A facet's field → the Records parameter that filters by it.
FILTER_PARAM = {
    "status": "status", "kind": "kind", "scope_kind": "scope", "trust": "trust", "author": "author", "realm": "realm",
}
FACET_LABELS = {
    "status": "Status", "kind": "Kind", "scope_kind": "Scope kind", "trust": "Trust", "author": "Author",
    "realm": "Realm",
}


def _facets(request: HttpRequest, access: Access) -> tuple[Facets, dict[str, str]]:
    params = request.GET.dict()
    asked = records_query(params, access=access, realm=chosen_realm(request))
    facets = record_facets(access=access, realm=asked.realm, filters=asked.filters, query=asked.query)
    return facets, records_state(params, asked.realm)


@panel_view
def records_facets_json(request: HttpRequest, access: Access) -> HttpResponse:
    """``GET /console/memory/records/facets.json?<the Records page's filters>``."""
    try:
        facets, _ = _facets(request, access)
    except AccessDenied as error:
        announce(access_denied, access=access, action=error.action, resource=error.resource)
        return JsonResponse({"error": str(error), "action": error.action}, status=403)
    except InvalidParams as error:
        return JsonResponse({"error": str(error)}, status=400)
    return JsonResponse(facets_json(facets))


def facets_json(facets: Facets) -> dict[str, Any]:
    return {
        "facets": {name: [{"value": value, "count": count} for value, count in facets.values(name)]
                   for name in FACET_FIELDS},
        "timed_out": [name for name in FACET_FIELDS if name in facets.timed_out],
    }


@panel_view
def records_facets(request: HttpRequest, access: Access) -> HttpResponse:
    """The facets block: each count a link that adds its filter, or removes it when it is set.

    A value the filter cannot ask for (an author kind a hand edit left, docs/realm-index.md §11)
    is counted but not linked.
    """
    facets, state = _facets(request, access)
    groups = []
    for name in FACET_FIELDS:
        param = FILTER_PARAM[name]
        items = []
        for value, count in facets.values(name):
            chosen = state.get(param) == str(value)
            href = None
            if name != "author" or value in AUTHOR_KINDS:
                kept = {key: item for key, item in state.items() if key not in (param, "limit")}
                href = _removing(kept, param) if chosen else records_url(**kept, **{param: value})
            items.append({"value": value, "count": count, "chosen": chosen, "href": href})
        groups.append({"name": name, "label": FACET_LABELS[name], "items": items,
                       "timed_out": name in facets.timed_out})
    return render(request, "memory_panel/records/_facets.html", {"groups": groups})


def _removing(kept: dict[str, str], param: str) -> str:
    """The Records page without the filter ``param``. A realm left out would fall back to the
    switcher's choice, which may be that realm: ``realm=`` asks for all realms instead, for this
    page only (docs/daily-use.md §3)."""
    url = records_url(**kept)
    return f"{url}{'&' if '?' in url else '?'}realm=" if param == "realm" else url
