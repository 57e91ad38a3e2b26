"""The console shell: the page frame every console page shares, and the realm list at /console/."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

from memory_panel.selectors.charts import realm_sparklines
from memory_panel.selectors.realms import realm_summaries
from memory_panel.store.realms import agent_memory_root, realm_names
from memory_panel.views.realm_choice import LISTED_REALMS_MAX, session_realm
from memory_panel.views.render import render_page
from memory_panel.visibility import can_read_memory, can_review_quarantine
from access.caller import ANONYMOUS, Access, access_for
from mobkit_console.accounts.oidc import oidc_browser_enabled
from mobkit_console.audit.selectors import audit_readable

# URL name -> the tab it belongs to; a biography belongs to Records.
_TABS = {
    "memory-holdings": "holdings",
    "memory-tile": "holdings",
    "memory-records": "records",
    "memory-record": "records",
    "memory-quarantine": "quarantine",
    "memory-dreams": "dreams",
    "memory-pipeline": "pipeline",
    "memory-knowledge": "knowledge",
    "memory-legacy": "legacy",
    "console-timeline": "timeline",
    "memory-ledger": "ledger",
    "memory-recall": "recall",
    "console-audit": "audit",
    "console-access": "access",
}


def memory_nav(access: Access) -> dict[str, bool]:
    """Which Memory tabs the caller sees (docs/ui.md §5: can_read gates the
    Memory entries, can_review_quarantine the quarantine section)."""
    return {"can_read": can_read_memory(access), "can_review_quarantine": can_review_quarantine(access)}


def console_layout(request: HttpRequest) -> dict[str, object]:
    """Context processor for base.html: the signed-in subject, its Memory tabs, the current tab.

    A view that already built the caller's Access may pass its own ``memory_nav``; view context
    wins over a context processor's.
    """
    context: dict[str, object] = {"active_tab": _active_tab(request), "oidc_sign_in": oidc_browser_enabled()}
    caller = getattr(request, "caller", ANONYMOUS)  # a 404 from before the middlewares ran has none
    if caller.is_signed_in:
        access = access_for(caller)
        context["subject"] = caller.subject
        context["memory_nav"] = memory_nav(access)
        context["can_read_audit"] = audit_readable(access=access)
        # The header's realm switcher, on every page (docs/daily-use.md §3): a list of the realms
        # while they are few, a search field past that, so a page never carries 500 names.
        names = realm_names()
        context["realm_count"] = len(names)
        context["realm_choices"] = names if len(names) <= LISTED_REALMS_MAX else []
        context["realm_choice"] = session_realm(request)
    return context


def _active_tab(request: HttpRequest) -> str:
    match = request.resolver_match
    return _TABS.get(match.url_name, "") if match is not None else ""


@login_required
def console_shell(request: HttpRequest) -> HttpResponse:
    access = access_for(request.caller)
    contains, after = request.GET.get("q", ""), request.GET.get("after") or None
    page = realm_summaries(access=access, contains=contains, after=after)
    realms = page.realms
    readable = [realm.name for realm in realms if not realm.error] if can_read_memory(access) else []
    context = {
        "realms": realms,
        "page": page,
        "contains": contains,
        # A list of more than a page says so, and can be narrowed by name (docs/daily-use.md §3).
        "paged": bool(page.next_after or contains or after),
        "sparklines": realm_sparklines(access=access, names=readable),
        "agent_memory_root": agent_memory_root(),
    }
    return render_page(request, "console/shell.html", "console/_realms.html", context)
