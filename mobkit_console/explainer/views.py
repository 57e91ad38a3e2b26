"""``/console/access/`` and ``/console/access/explain.json``: the access explainer (docs/access.md §2.9).

Both are for access admins and console admins; anyone else gets 403 and an ``access.denied`` audit
entry, as on every gate. The page answers GET and HEAD alone (``panel_view``).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe

from access.caller import Access, access_for
from access.engine import ACCESS_ACTIONS
from memory_panel.errors import AccessDenied, PanelError
from memory_panel.signals import access_denied, announce
from memory_panel.store.realms import store_failed
from memory_panel.views.render import http_status, panel_view, render_page
from mobkit_console.audit.services import audit_flush
from mobkit_console.explainer.selectors import (
    BadField,
    access_map,
    explain_question,
    last_reload,
    question_parse,
    recent_denials,
    require_access_reader,
    rules_in_force,
)

QUESTION_PARAMS = ("subject", "groups", "action", "identity", "memory_id", "realm", "mob", "operator")


@panel_view
def access_page(request: HttpRequest, access: Access) -> HttpResponse:
    require_access_reader(access)
    asked = {name: request.GET.get(name, "") for name in QUESTION_PARAMS}
    audit_flush()  # this process's queued denials and reloads are on the page too
    context = {
        "asked": asked,
        "actions": ACCESS_ACTIONS,
        "revision": access.revision,
        "enforced": access.enforced,
        "available": access.available,
        "rules": rules_in_force(access),
        "last_reload": last_reload(),
        "denials": [(d.entry, "?" + urlencode(d.explain_query) if d.explain_query else None) for d in recent_denials()],
    }
    status = 200
    if asked["subject"].strip() or asked["action"].strip():
        try:
            question = question_parse(request.GET.dict())
            context["answer"] = explain_question(access=access, question=question)
            context["map"] = access_map(access=access, question=question)
        except PanelError as error:  # the form is shown again with the problem named
            context["problem"] = error
            status = http_status(error)
    return render_page(request, "explainer/page.html", "explainer/page.html", context, status=status)


@require_safe
def explain_json(request: HttpRequest) -> JsonResponse:
    """``{"allowed", "decisive", "matched", "summary"}``; errors as JSON naming what was wrong."""
    if not request.caller.is_signed_in:
        return JsonResponse({"error": "unauthorized", "message": "sign in to explain access"}, status=401)
    access = access_for(request.caller)
    try:
        try:
            require_access_reader(access)
            answer = explain_question(access=access, question=question_parse(request.GET.dict()))
        except DatabaseError as failure:
            raise store_failed(failure) from failure
    except AccessDenied as error:
        announce(access_denied, access=access, action=error.action, resource=error.resource)
        return _error(error)
    except PanelError as error:
        return _error(error)
    return JsonResponse(answer.as_json())


# The JSON error kinds, by the HTTP status ``http_status`` gives a domain error.
_ERROR_KINDS = {400: "invalid_params", 403: "access_denied", 404: "not_found"}


def _error(error: PanelError) -> JsonResponse:
    status = http_status(error)
    body = {"error": _ERROR_KINDS.get(status, "unavailable"), "message": error.message}
    if isinstance(error, BadField):
        body["field"] = error.field
    return JsonResponse(body, status=status)
