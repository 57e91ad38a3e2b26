"""``/console/views/``: the caller's saved views and those shared with them (docs/saved-views.md).

Saving, sharing and deleting are POSTs (Django's CSRF check applies); opening a view redirects to
its page, which checks the opener's access as for any request.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from memory_panel.errors import InvalidParams, NotFound, PanelError
from memory_panel.views.render import error_page
from mobkit_console.saved_views import selectors, services
from mobkit_console.saved_views.models import PAGES


def _list_url() -> str:
    return reverse("saved-views")


def _answer(request: HttpRequest, change) -> HttpResponse:
    """Run ``change``; back to the list, or the console's error page (400 bad input, 404 not the caller's)."""
    try:
        change()
    except (InvalidParams, NotFound) as error:
        return error_page(request, error)
    return HttpResponseRedirect(_list_url())


@require_safe
@login_required
def saved_views_page(request: HttpRequest) -> HttpResponse:
    own = [(view, selectors.view_url(view)) for view in selectors.views_of(request.user)]
    shared = [(view, selectors.view_url(view)) for view in selectors.views_shared_with(request.user)]
    return render(request, "saved_views/page.html", {"own": own, "shared": shared, "pages": PAGES,
                                                     "active_tab": "views"})


@require_POST
@login_required
def save(request: HttpRequest) -> HttpResponse:
    post = request.POST
    return _answer(request, lambda: services.save_view(
        owner=request.user, name=post.get("name", ""), page=post.get("page", ""), query=post.get("query", "")
    ))


@require_POST
@login_required
def delete(request: HttpRequest, view_id: int) -> HttpResponse:
    return _answer(request, lambda: services.delete_view(owner=request.user, view_id=view_id))


@require_POST
@login_required
def share(request: HttpRequest, view_id: int) -> HttpResponse:
    username = request.POST.get("username", "")
    if request.POST.get("stop"):
        return _answer(request, lambda: services.unshare_view(owner=request.user, view_id=view_id, username=username))
    return _answer(request, lambda: services.share_view(owner=request.user, view_id=view_id, username=username))


@require_safe
@login_required
def open_view(request: HttpRequest, view_id: int) -> HttpResponse:
    try:
        view = selectors.openable_view(user=request.user, view_id=view_id)
    except PanelError as error:
        return error_page(request, error)
    return HttpResponseRedirect(selectors.view_url(view))
