"""``/console/audit/`` and ``/console/audit.ndjson``: the audit log, for its readers only (docs/audit-and-oidc.md §3).

Both answer GET and HEAD alone (``panel_view``): no route changes or deletes an entry.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from access.caller import Access
from memory_panel.views.render import panel_view, render_page
from memory_panel.views.streaming import ndjson_line, streamed
from mobkit_console.audit.models import ACTIONS
from mobkit_console.audit.selectors import (
    FILTER_PARAMS,
    audit_cursor_parse,
    audit_filter_parse,
    audit_limit_parse,
    audit_list,
    audit_walk,
    require_audit_reader,
)
from mobkit_console.audit.services import audit_flush


@panel_view
def audit_page(request: HttpRequest, access: Access) -> HttpResponse:
    require_audit_reader(access=access)
    filters = audit_filter_parse(request.GET.dict())
    limit = audit_limit_parse(request.GET.get("limit"))
    cursor = audit_cursor_parse(request.GET.get("cursor"))
    audit_flush()  # this process's queued entries are on the page too
    page = audit_list(filters=filters, limit=limit, cursor=cursor)
    state = {name: request.GET[name].strip() for name in (*FILTER_PARAMS, "limit") if request.GET.get(name, "").strip()}
    context = {
        "page": page,
        "state": state,
        "actions": ACTIONS,
        "next_url": "?" + urlencode({**state, "cursor": page.next_cursor}) if page.next_cursor else None,
        "ndjson_query": "?" + urlencode(state) if state else "",
    }
    return render_page(request, "audit/page.html", "audit/_entries.html", context)


@panel_view
def audit_ndjson(request: HttpRequest, access: Access) -> HttpResponse:
    require_audit_reader(access=access)
    filters = audit_filter_parse(request.GET.dict())
    audit_flush()
    lines = (ndjson_line(entry) for entry in audit_walk(filters=filters))
    response = StreamingHttpResponse(streamed(request, lines), content_type="application/x-ndjson")
    response["X-Content-Type-Options"] = "nosniff"
    return response

