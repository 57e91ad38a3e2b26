"""How every HTML route answers: the htmx fragment or the whole page, and errors as pages.

``panel_view`` is the one view convention: sign-in required, GET/HEAD only, ``Vary: HX-Request``,
the caller's Access passed in, and a domain error rendered as a clear page with the HTTP status
from ``HTTP_STATUS`` (the HTML twin of the JSON-RPC code table).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from memory_panel.errors import (
    AccessDenied,
    AuditRefused,
    HistoryUnavailable,
    InvalidParams,
    NotFound,
    PanelError,
    RealmIndexing,
    StoreFailed,
)
from memory_panel.signals import access_denied, announce
from memory_panel.store.realms import store_failed
from memory_panel.store.rows import noting_skipped_realms, skipped_realms
from access.caller import access_for

# Most specific class first; any other domain error is the store's fault, never the caller's.
HTTP_STATUS: tuple[tuple[type[PanelError], int], ...] = (
    (InvalidParams, 400),
    (AccessDenied, 403),
    (NotFound, 404),
    (HistoryUnavailable, 409),
    (AuditRefused, 503),
    (StoreFailed, 503),
)


def http_status(error: PanelError) -> int:
    return next((status for kind, status in HTTP_STATUS if isinstance(error, kind)), 503)


def render_page(
    request: HttpRequest, page: str, fragment: str, context: dict[str, Any], *, status: int = 200
) -> HttpResponse:
    """The fragment alone for an HX-Request, the whole page otherwise.

    A history restore is an HX-Request too, but it replaces the whole body, so it gets the page.
    Caches must keep the two answers apart: ``Vary: HX-Request``.
    """
    partial = wants_fragment(request)
    # docs/realm-failures.md §1: realms an all-realm read could not read are named on the page.
    context.setdefault("skipped_realms", skipped_realms())
    response = render(request, fragment if partial else page, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def wants_fragment(request: HttpRequest) -> bool:
    """Does ``render_page`` answer this request with the fragment alone? A view may skip what only the page shows."""
    return bool(request.htmx) and not request.htmx.history_restore_request


@dataclass(frozen=True)
class Section:
    """One section's data, or the denial shown in its place: "no grant", never a fake empty (docs/ui.md §4)."""

    data: Any = None
    denied: AccessDenied | None = None


def section(selector: Callable[..., Any], **kwargs: Any) -> Section:
    try:
        return Section(data=selector(**kwargs))
    except AccessDenied as error:
        return Section(denied=error)


def count_section(counter: Callable[..., Any], **kwargs: Any) -> Section:
    """A list's count is a courtesy: while a realm's index is being built the list shows without it."""
    try:
        return section(counter, **kwargs)
    except StoreFailed:
        return Section()


def panel_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Sign-in, GET/HEAD, ``Vary: HX-Request``, ``view(request, access, ...)``, errors as pages."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        access = access_for(request.caller)
        try:
            try:
                with noting_skipped_realms():
                    return view(request, access, *args, **kwargs)
            except DatabaseError as failure:  # a busy, damaged or too-slow realm: say so, no 500
                raise store_failed(failure) from failure
        except AccessDenied as error:
            announce(access_denied, access=access, action=error.action, resource=error.resource)
            return error_page(request, error)
        except PanelError as error:
            return error_page(request, error)

    return login_required(require_safe(vary_on_headers("HX-Request")(wrapper)))


# docs/realm-index.md §7: the "being indexed" page asks again this often, by itself (a meta refresh).
INDEXING_REFRESH_SECONDS = 5


def error_page(request: HttpRequest, error: PanelError) -> HttpResponse:
    """A domain error as the console's own page, with the status ``HTTP_STATUS`` gives it.

    A realm being indexed is a page that says how far along and refreshes itself until it can be shown.
    """
    status = http_status(error)
    context = {"error": error, "denied": isinstance(error, AccessDenied), "status": status}
    if isinstance(error, RealmIndexing):
        context |= {"indexing": error.progress, "refresh_seconds": INDEXING_REFRESH_SECONDS}
    response = render(request, "memory_panel/error.html", context, status=status)
    if isinstance(error, RealmIndexing):
        response["Retry-After"] = str(INDEXING_REFRESH_SECONDS)
    return response
