"""The Pipeline page: the conveyor, waiting proposals, the gate, the quarantine queue, verdicts to review."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from memory_panel.selectors import pending, pipeline
from memory_panel.selectors.named_records import record_titles
from memory_panel.selectors.quarantine import parse_queue_order
from memory_panel.views.memory import quarantine_context
from memory_panel.views.render import panel_view, render_page, section
from memory_panel.views.realm_choice import chosen_realm
from memory_panel.wire.params import LISTS_DEFAULT_LIMIT, LISTS_MAX_LIMIT, RECORDS_DEFAULT_LIMIT
from access.caller import Access


@panel_view
def pipeline_page(request: HttpRequest, access: Access) -> HttpResponse:
    realm = chosen_realm(request)
    limit = RECORDS_DEFAULT_LIMIT
    verdicts = section(pipeline.review_queue, access=access, realm=realm, limit=LISTS_DEFAULT_LIMIT)
    queue = quarantine_context(access=access, realm=realm, limit=limit, order=parse_queue_order(request.GET.get("order")))
    context = {
        "realm": realm,
        "conveyor": section(pipeline.pipeline_conveyor, access=access, realm=realm),
        "proposals": section(pending.pending_proposals, access=access, realm=realm, limit=LISTS_MAX_LIMIT),
        **queue,
        "verdicts": verdicts,
        "titles": queue["titles"] | record_titles(
            access=access, refs=[(v.realm, v.record_id) for v in (verdicts.data or ([], []))[0]]
        ),
        "proposals_cap": LISTS_MAX_LIMIT,
    }
    return render_page(request, "memory_panel/pipeline/page.html", "memory_panel/pipeline/_pipeline.html", context)
