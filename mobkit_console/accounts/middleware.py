"""Bearer-token sign-in for programs: the HTTP half of docs/wire-contract.md §C.1."""

from __future__ import annotations

import logging
from typing import Callable

from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.base import SessionBase
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_cache_control

from mobkit_console.accounts.oidc import InvalidToken, IssuerUnavailable
from mobkit_console.accounts.oidc_browser import session_caller
from mobkit_console.accounts.tokens import bearer_sign_in
from mobkit_console.audit.services import Actor, audit_record

logger = logging.getLogger("mobkit_console.accounts")


def token_from_request(request: HttpRequest) -> str | None:
    """The token a request presents: the Authorization header wins over ``?auth_token=`` (docs/access.md §2.7)."""
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        return credentials.strip()
    return request.GET.get("auth_token")


class CallerMiddleware:
    """Sets ``request.caller`` (access/caller.py), the one value every gate takes: from the token when
    a request carries one (its user then replaces the session's), else from the session cookie.

    A request that presents a token is judged by that token alone: a bad console token leaves the
    caller anonymous even if a session cookie came along, and the view decides between 401 and a
    redirect; a JWT that fails its checks is answered 401 here, with ``WWW-Authenticate`` naming
    ``invalid_token`` (docs/audit-and-oidc.md §4). Either failure is a failed sign-in in the audit log.
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
            try:
                signed = bearer_sign_in(raw)
            except InvalidToken as error:
                _sign_in_failed(request, "jwt", str(error))
                return invalid_token_response(str(error))
            except IssuerUnavailable as error:
                logger.warning("OIDC issuer unavailable: %s", error)
                return JsonResponse(
                    {"error": "issuer_unavailable", "message": "the identity provider's keys cannot be fetched now"},
                    status=503,
                )
            user = signed.user
            if user is None:
                _sign_in_failed(request, signed.method, "unknown token")
                user = AnonymousUser()
            else:
                request._dont_enforce_csrf_checks = True
            request.user = user
            request.caller = signed.caller
            request.session = TokenSession()

            async def auser():
                return user

            request.auser = auser
        else:
            request.caller = session_caller(user=request.user, session=request.session)
        return self.get_response(request)


class TokenSession(SessionBase):
    """A token caller's session: it lasts the request and is never stored or sent as a cookie.

    A program signs every request with its token; a page's choices (the realm it asked for) mean
    nothing to its next request, and storing a session per request would fill the database.
    """

    def load(self) -> dict:
        return {}

    def exists(self, session_key: str) -> bool:
        return False

    def create(self) -> None:
        pass

    def save(self, must_create: bool = False) -> None:
        pass

    def delete(self, session_key: str | None = None) -> None:
        pass

    # SessionMiddleware stores a session, and sets its cookie, only when it was modified.
    modified = property(lambda self: False, lambda self, value: None)


def invalid_token_response(reason: str) -> HttpResponse:
    """RFC 6750 §3: 401, ``WWW-Authenticate: Bearer error="invalid_token"`` and why, as JSON too."""
    response = JsonResponse({"error": "invalid_token", "error_description": reason}, status=401)
    described = "".join(c for c in reason if c.isascii() and c.isprintable() and c not in '"\\')
    response["WWW-Authenticate"] = f'Bearer error="invalid_token", error_description="{described}"'
    return response


def _sign_in_failed(request: HttpRequest, method: str, reason: str) -> None:
    client = request.META.get("REMOTE_ADDR", "")
    audit_record(action="sign_in", outcome="failed", detail={"method": method, "reason": reason}, actor=Actor(client=client))


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
