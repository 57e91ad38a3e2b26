"""WebSocket sign-in: a session cookie, or a token in the query string or Authorization header."""

from __future__ import annotations

from urllib.parse import ParseResult, parse_qs, urlparse

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.auth.models import AnonymousUser

from mobkit_console.accounts.tokens import user_for_token


def token_from_scope(scope: dict) -> str | None:
    """Same precedence as HTTP: the Authorization header wins over ``?auth_token=``."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer":
                return credentials.strip()
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("auth_token")
    return values[0] if values else None


def _origin(scope: dict) -> ParseResult | None:
    for name, value in scope.get("headers", []):
        if name == b"origin":
            return urlparse(value.decode("latin-1"))
    return None


class TokenAuthMiddleware:
    """Sets ``scope["user"]``: from the token when one is presented, else from the session cookie.

    As over HTTP, a presented token decides alone; a bad one leaves the socket anonymous, and the
    consumer closes it with 4401.
    """

    def __init__(self, inner) -> None:
        self.inner = inner
        self.session_app = AuthMiddlewareStack(inner)
        # Only Channels' origin check is wanted from it, against DJANGO_ALLOWED_HOSTS.
        self.origins = AllowedHostsOriginValidator(inner)

    async def __call__(self, scope, receive, send):
        raw = token_from_scope(scope)
        if raw is None:
            # A browser sends the cookie with any page's socket: only a page from an allowed host
            # may use it (no cross-site WebSocket hijacking); any other caller is anonymous (4401).
            if not self.origins.valid_origin(_origin(scope)):
                return await self.inner(dict(scope, user=AnonymousUser()), receive, send)
            return await self.session_app(scope, receive, send)
        user = await database_sync_to_async(user_for_token)(raw)
        return await self.inner(dict(scope, user=user or AnonymousUser()), receive, send)
