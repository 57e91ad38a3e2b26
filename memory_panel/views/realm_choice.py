"""The operator's realm choice: kept in the session, so it follows them from page to page.

Only the header's switcher changes it: it posts to ``realm_switch``, which works from any page, those
without a realm of their own included. ``?realm=NAME`` (or ``?realm=`` for all realms) on a panel page
shows that page for that realm and leaves the choice alone, so a shared link never moves the
operator's other pages; a page asked without ``realm`` uses the choice (docs/daily-use.md §3).
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from access.caller import access_for
from memory_panel.errors import AccessDenied, InvalidParams
from memory_panel.store.realms import realm_exists, realm_names_containing
from memory_panel.views.render import error_page
from memory_panel.visibility import AGENT_READ, can_read_memory
from memory_panel.wire.params import parse_realm

SESSION_KEY = "memory_panel.realm"

# Up to this many realms the header lists them all; past it, a search field that suggests
# SUGGESTED_REALMS names at a time, so a page's size does not grow with the number of realms.
LISTED_REALMS_MAX = 30
SUGGESTED_REALMS = 20

# A switch starts the page's list afresh: a cursor or a loaded count from another realm means nothing.
_DROPPED_ON_SWITCH = ("realm", "cursor", "shown")


def chosen_realm(request: HttpRequest) -> str | None:
    """The realm the page shows: ``?realm=`` when given (for this page only), else the session's choice."""
    if "realm" in request.GET:
        return parse_realm(request.GET.get("realm"))  # an unknown name is the caller's error, said so
    realm = request.session.get(SESSION_KEY)
    if isinstance(realm, str) and realm_exists(realm):
        return realm
    # A realm file removed since it was chosen: all realms again, rather than an error on every page.
    request.session.pop(SESSION_KEY, None)
    return None


def remember_realm(request: HttpRequest, realm: str | None) -> None:
    if realm is None:
        request.session.pop(SESSION_KEY, None)
    elif request.session.get(SESSION_KEY) != realm:
        request.session[SESSION_KEY] = realm


def session_realm(request: HttpRequest) -> str | None:
    """The remembered choice as it stands, for the header (no validation: the page's view did that)."""
    realm = request.session.get(SESSION_KEY) if hasattr(request, "session") else None
    return realm if isinstance(realm, str) else None


@login_required
@require_POST
def realm_switch(request: HttpRequest) -> HttpResponse:
    """The header's switcher: remember the realm, then go back to the page it was used on."""
    try:
        realm = parse_realm(request.POST.get("realm"))
    except InvalidParams as error:  # a realm removed while the page was open: say so, no 500
        return error_page(request, error)
    remember_realm(request, realm)
    return HttpResponseRedirect(_back_to(request, request.POST.get("next", "")), status=303)


@login_required
@require_GET
def realm_options(request: HttpRequest) -> HttpResponse:
    """The search field's suggestions: ``<option>``s for the realms whose names hold ``?realm=``."""
    if not can_read_memory(access_for(request.caller)):
        return error_page(request, AccessDenied(AGENT_READ, None))
    names, _ = realm_names_containing(request.GET.get("realm", ""), SUGGESTED_REALMS)
    # No context processors: a keystroke's answer needs no header, tabs or realm list.
    return HttpResponse(render_to_string("memory_panel/_realm_options.html", {"names": names}))


def _back_to(request: HttpRequest, target: str) -> str:
    allowed = {request.get_host()}
    if not url_has_allowed_host_and_scheme(target, allowed_hosts=allowed, require_https=request.is_secure()):
        return reverse("memory-holdings")
    parts = urlsplit(target)
    query = QueryDict(parts.query, mutable=True)
    for name in _DROPPED_ON_SWITCH:
        query.pop(name, None)
    kept = urlencode([(key, value) for key, values in query.lists() for value in values])
    return f"{parts.path}?{kept}" if kept else parts.path
