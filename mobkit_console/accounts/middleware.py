"""Bearer-token sign-in for programs: the HTTP half of docs/wire-contract.md §C.1."""

from __future__ import annotations

from typing import Callable

from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control

from mobkit_console.accounts.tokens import user_for_token


def token_from_request(request: HttpRequest) -> str | None:
    """The token a request presents: the Authorization header wins over ``?auth_token=`` (docs/access.md §2.7)."""
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        return credentials.strip()
    return request.GET.get("auth_token")


class BearerTokenMiddleware:
    """Replaces the session user with the token's user when a request carries a token.

    A request that presents a token is judged by that token alone: a bad one leaves the caller
    anonymous even if a session cookie came along, and the view decides between 401 and a redirect.
    A request authenticated by token carries no session cookie for a forger to ride, so CSRF
    checks are skipped for it. CsrfViewMiddleware makes its decision in process_view, which
    Django runs only after every middleware's __call__ has run, so the flag set here is seen
    even though CsrfViewMiddleware is listed earlier in settings.MIDDLEWARE.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        raw = token_from_request(request)
        if raw is not None:
            user = user_for_token(raw)
            if user is None:
                user = AnonymousUser()
            else:
                request._dont_enforce_csrf_checks = True
                request.sign_in = "token"  # how the audit log names this caller's sign-in
            request.user = user

            async def auser():
                return user

            request.auser = auser
        return self.get_response(request)


class SignedInNoStoreMiddleware:
    """``Cache-Control: private, no-store`` on every response to a signed-in caller.

    Pages, JSON-RPC answers, exports and ``/console/experience`` hold memory only that caller may
    see: neither a shared proxy nor the browser's disk cache (the back button on a shared machine
    after sign-out) may keep them. Static files never reach here (WhiteNoise answers first).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.user.is_authenticated:
            patch_cache_control(response, private=True, no_store=True)
        return response
