"""The Pipeline page: the conveyor, waiting proposals, the gate, the quarantine queue, verdicts to review."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from memory_panel.selectors import dreams, pending, pipeline, quarantine
from memory_panel.store.realms import realm_names
from memory_panel.views.render import panel_view, render_page, section
from memory_panel.wire.params import LISTS_DEFAULT_LIMIT, LISTS_MAX_LIMIT, RECORDS_DEFAULT_LIMIT, parse_realm
from mobkit_console.access.caller import Access


@panel_view
def pipeline_page(request: HttpRequest, access: Access) -> HttpResponse:
    realm = parse_realm(request.GET.get("realm"))
    limit = RECORDS_DEFAULT_LIMIT
    context = {
        "realm": realm,
        "realm_choices": realm_names(),
        "active_tab": "pipeline",
        "limit": limit,
        "conveyor": section(pipeline.pipeline_conveyor, access=access, realm=realm),
        "proposals": section(pending.pending_proposals, access=access, realm=realm, limit=LISTS_MAX_LIMIT),
        "queue": section(quarantine.quarantine_queue, access=access, realm=realm, limit=limit),
        "verdicts": section(dreams.open_audit_verdicts, access=access, realm=realm, limit=LISTS_DEFAULT_LIMIT),
        "proposals_cap": LISTS_MAX_LIMIT,
    }
    return render_page(request, "memory_panel/pipeline/page.html", "memory_panel/pipeline/_pipeline.html", context)
