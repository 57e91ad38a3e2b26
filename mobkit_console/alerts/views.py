"""``/console/alerts/``: the rules, their state and preview, the delivery log, and a test send —
for the audit log's readers only (console admins and ``access.admin`` holders, docs/alerts.md §6)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from access.caller import Access, access_for
from memory_panel.errors import InvalidParams, PanelError
from memory_panel.views.render import error_page, panel_view, render_page
from mobkit_console.audit.selectors import require_audit_reader
from mobkit_console.audit.services import actor_for, audit_record

from .conditions import now_ms
from .config import current_alert_rules
from .delivery import deliveries_test
from .selectors import alert_rules_view, delivery_log


def _cursor(raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or len(raw) > 18:
        raise InvalidParams("before must be a delivery log id (a whole number)")
    return int(raw)


@panel_view
def alerts_page(request: HttpRequest, access: Access) -> HttpResponse:
    require_audit_reader(access=access)
    page = delivery_log(before=_cursor(request.GET.get("before")))
    context = {"rules": alert_rules_view(), "log": page, "configured": current_alert_rules().path is not None,
               "sent": request.GET.get("sent") == "1"}
    return render_page(request, "alerts/page.html", "alerts/_log.html", context)


@login_required
@require_POST
def alerts_test(request: HttpRequest) -> HttpResponse:
    """POST (with the CSRF token) ``rule=<id>``: one test notice to each of the rule's receivers, audited."""
    access = access_for(request.caller)
    try:
        require_audit_reader(access=access)
        rule = current_alert_rules().by_id.get(request.POST.get("rule", ""))
        if rule is None:
            raise InvalidParams("rule must name a rule of the alert rules file")
    except PanelError as error:
        return error_page(request, error)
    deliveries = deliveries_test(rule=rule, now=now_ms())
    audit_record(action="alerts.test", target=rule.id, detail={"deliveries": len(deliveries)},
                 actor=actor_for(request))
    return redirect("/console/alerts/?sent=1")
