"""``GET /console/experience``: what the caller may do, for clients shaping their navigation."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from access.caller import access_for, access_status
from mobkit_console.shell import memory_nav


@require_GET
def experience(request: HttpRequest) -> JsonResponse:
    if not request.caller.is_signed_in:
        return JsonResponse({"error": "unauthorized", "reason": "missing_credentials"}, status=401)
    access = access_for(request.caller)
    status = access_status(access)
    return JsonResponse(
        {
            "memory": {"available": True, **memory_nav(access)},
            "access": {
                key: status[key] for key in ("available", "enabled", "subject", "groups", "can_administer")
            },
        }
    )
