"""WebSocket sign-in: a session cookie, or a token in the query string or Authorization header."""

from __future__ import annotations

from urllib.parse import parse_qs

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http.request import split_domain_port, validate_host

from mobkit_console.accounts.oidc import InvalidToken, IssuerUnavailable
from access.caller import ANONYMOUS, Caller
from mobkit_console.accounts.oidc_browser import session_caller
from mobkit_console.accounts.tokens import bearer_sign_in
from mobkit_console.origins import console_origin


def token_from_scope(scope: dict) -> str | None:
    """Same precedence as HTTP: the Authorization header wins over ``?auth_token=``."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer":
                return credentials.strip()
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("auth_token")
    return values[0] if values else None


def _header(scope: dict, wanted: bytes) -> str | None:
    for name, value in scope.get("headers", []):
        if name == wanted:
            return value.decode("latin-1")
    return None


def _served_scheme(scope: dict) -> str:
    """The page scheme of a console served on this socket's address: https for wss, or when the
    proxy says so in SECURE_PROXY_SSL_HEADER, as ``request.is_secure()`` decides over HTTP."""
    if scope.get("scheme") == "wss":
        return "https"
    name, secure_value = settings.SECURE_PROXY_SSL_HEADER or ("", None)
    header = name.removeprefix("HTTP_").lower().replace("_", "-").encode("latin-1")
    return "https" if header and _header(scope, header) == secure_value else "http"


def cookie_origin_allowed(scope: dict) -> bool:
    """May the page that opened this socket ride the session cookie? Only a page of the console's own
    origin (scheme, host and port): MOBKIT_ALLOWED_ORIGINS when set (behind a proxy), else the origin
    this socket was served on, whose host DJANGO_ALLOWED_HOSTS must also allow."""
    host = _header(scope, b"host") or ""
    served = f"{_served_scheme(scope)}://{host}"
    if not console_origin(_header(scope, b"origin"), served=served, allowed=settings.MOBKIT_ALLOWED_ORIGINS):
        return False
    domain, _ = split_domain_port(host)
    return bool(settings.MOBKIT_ALLOWED_ORIGINS) or validate_host(domain, settings.ALLOWED_HOSTS)


class SessionCallerMiddleware:
    """Inside the session stack: ``scope["caller"]`` from the session, as over HTTP (a user signed in
    through the issuer keeps the groups it vouched for, docs/audit-and-oidc.md §5)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    async def __call__(self, scope, receive, send):
        caller = await database_sync_to_async(session_caller)(user=scope["user"], session=scope["session"])
        return await self.inner(dict(scope, caller=caller), receive, send)


class TokenAuthMiddleware:
    """Sets ``scope["caller"]`` (access/caller.py) and ``scope["user"]``: from the token when one is
    presented, else from the session cookie.

    As over HTTP, a presented token decides alone; a bad one (a console token or a JWT, docs/audit-and-oidc.md §4)
    leaves the socket anonymous, and the consumer closes it with 4401.
    """

    def __init__(self, inner) -> None:
        self.inner = inner
        self.session_app = AuthMiddlewareStack(SessionCallerMiddleware(inner))

    async def __call__(self, scope, receive, send):
        raw = token_from_scope(scope)
        if raw is None:
            # A browser sends the cookie with any page's socket, even one on another port or scheme
            # of the same host: only the console's own origin may use it (no cross-site WebSocket
            # hijacking); any other caller is anonymous (4401). A token works from any origin.
            if not cookie_origin_allowed(scope):
                return await self.inner(dict(scope, user=AnonymousUser(), caller=ANONYMOUS), receive, send)
            return await self.session_app(scope, receive, send)
        user, caller = await database_sync_to_async(_bearer_caller)(raw)
        return await self.inner(dict(scope, user=user or AnonymousUser(), caller=caller), receive, send)


def _bearer_caller(raw: str) -> tuple[AbstractBaseUser | None, Caller]:
    """The token's user and caller; anonymous for any token that does not sign in (the socket then closes 4401)."""
    try:
        signed = bearer_sign_in(raw)
    except (InvalidToken, IssuerUnavailable):
        return None, ANONYMOUS
    return signed.user, signed.caller
