"""How every HTML route answers htmx (CONTRACT "HTTP routes"), in one place."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def render_page(
    request: HttpRequest, page: str, fragment: str, context: dict[str, Any], *, status: int = 200
) -> HttpResponse:
    """The fragment alone for an HX-Request, the whole page otherwise.

    A history restore is an HX-Request too, but it replaces the whole body, so it gets the page.
    Caches must keep the two answers apart: ``Vary: HX-Request``.
    """
    partial = bool(request.htmx) and not request.htmx.history_restore_request
    response = render(request, fragment if partial else page, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response
