"""Names the caller of every request for the audit entries it may cause (docs/audit-and-oidc.md §2)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from mobkit_console.audit.services import actor_for, actor_set


class AuditActorMiddleware:
    """Runs after the bearer middleware, so a token's user is the one named."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        actor_set(actor_for(request))
        return self.get_response(request)
