"""Pages for the ledger, the legacy markdown store and the recall preview: parse, call, render.

Each page's selector is the one its JSON-RPC method calls, so a filter or a score cannot differ
between the page and the wire; an RpcError from it becomes the page's error box, never a 500.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory_panel.ledger import (
    SUPPORTED_STORES,
    ledger_health,
    ledger_overview,
    parse_ledger_filters,
)
from memory_panel.legacy_markdown import legacy_markdown_files
from memory_panel.realms import realm_names, store_error_message
from memory_panel.recall import parse_recall_request, recall_preview
from mobkit_console.access.caller import access_for_user
from mobkit_console.pages import render_page
from mobkit_console.rpc.errors import ACCESS_DENIED, RpcError

LEDGER_FILTERS = ("entity", "topic", "store", "query")


def _error_status(error: RpcError) -> int:
    return 403 if error.code == ACCESS_DENIED else 200


def _given(request: HttpRequest, names: tuple[str, ...]) -> dict[str, str]:
    """The non-blank GET params among ``names``: an empty form field means "no filter"."""
    return {name: value for name in names if (value := request.GET.get(name, "").strip())}


@login_required
def ledger_page(request: HttpRequest) -> HttpResponse:
    filters = _given(request, LEDGER_FILTERS)
    context: dict = {
        "filters": filters,
        "store_names": SUPPORTED_STORES,
        "health_configured": settings.MOBKIT_LEDGER_HEALTH_ENDPOINT is not None,
    }
    status = 200
    try:
        context["ledger"] = ledger_overview(
            access=access_for_user(request.user), filters=parse_ledger_filters(filters)
        )
    except RpcError as error:
        context["error"] = error.message
        status = _error_status(error)
    return render_page(request, "memory/ledger.html", "memory/_ledger_results.html", context, status=status)


@login_required
def ledger_health_fragment(request: HttpRequest) -> HttpResponse:
    """Loaded by the ledger page after it renders, so a slow endpoint never delays the page."""
    endpoint = settings.MOBKIT_LEDGER_HEALTH_ENDPOINT
    access = access_for_user(request.user)
    if not access.allows("agent.memory.read"):
        return render(request, "memory/_ledger_health.html", {"denied": True}, status=403)
    health = ledger_health(endpoint=endpoint) if endpoint is not None else None
    return render(request, "memory/_ledger_health.html", {"health": health})


@login_required
def recall_page(request: HttpRequest) -> HttpResponse:
    given = _given(request, ("identity", "query_text", "realm", "max_entries"))
    context: dict = {"form": given, "realms": realm_names()}
    status = 200
    if "identity" in given:
        params: dict = dict(given)
        if given.get("max_entries", "").isdigit():
            params["max_entries"] = int(given["max_entries"])
        try:
            context["preview"] = recall_preview(
                access=access_for_user(request.user), request=parse_recall_request(params)
            )
        except RpcError as error:
            context["error"] = error.message
            status = _error_status(error)
        except DatabaseError as failure:  # a busy, damaged or too-slow realm: say so, no 500
            context["error"] = store_error_message(failure)
            status = 503
    return render_page(request, "memory/recall.html", "memory/_recall_result.html", context, status=status)


@login_required
def legacy_page(request: HttpRequest) -> HttpResponse:
    files = legacy_markdown_files(access=access_for_user(request.user))
    return render_page(request, "memory/legacy.html", "memory/_legacy_files.html", {"files": files})
