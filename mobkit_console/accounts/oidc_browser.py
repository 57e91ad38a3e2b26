"""Browser sign-in through the OpenID Connect issuer: the authorization-code flow with PKCE,
by mozilla-django-oidc (docs/audit-and-oidc.md §6).

The library expects the provider's endpoints as settings; the console reads them from the issuer's
discovery document instead (one variable to configure), and checks the ID token with the same
PyJWT code as bearer tokens, with the client id as audience and the nonce of this sign-in.
"""

from __future__ import annotations

import logging
from typing import Any

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from access.caller import Caller, caller_for_user
from mobkit_console.accounts.oidc import (
    InvalidToken,
    IssuerUnavailable,
    identity_from_claims,
    issuer_document,
    oidc_browser_enabled,
    verified_claims,
)
from mobkit_console.accounts.tokens import user_for_subject
from mobkit_console.audit.services import Actor, audit_record

logger = logging.getLogger("mobkit_console.accounts")

# The session key holding the groups the issuer vouched for at sign-in (docs/audit-and-oidc.md §5);
# a session holding it began through the issuer.
SESSION_GROUPS = "mobkit_oidc_groups"
# Hands the groups of the identity the backend signed in to the callback view, within one request.
_REQUEST_VOUCHED = "_mobkit_oidc_vouched_groups"
# Where a callback no sign-in in this browser waits for is sent: the sign-in page, saying so.
STALE_CALLBACK_URL = "/console/login/?sign_in=stale"


def session_caller(*, user: Any, session: Any) -> Caller:
    """The caller a session cookie signs in: a session begun through the issuer keeps the groups it
    vouched for, for the session's lifetime (docs/audit-and-oidc.md §5)."""
    groups = session.get(SESSION_GROUPS)
    if isinstance(groups, list):
        return caller_for_user(user, sign_in="oidc", vouched_groups=frozenset(groups))
    return caller_for_user(user, sign_in="session")


class ConsoleOIDCBackend(OIDCAuthenticationBackend):
    """Signs in the subject the ID token (and userinfo) name, as the access.toml subject."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Django builds every backend for every sign-in, password ones too: nothing is read here,
        # so a console without OIDC needs none of the library's settings.
        self.UserModel = get_user_model()

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        if request is None or not oidc_browser_enabled() or "code_verifier" not in kwargs:
            return None  # not the OIDC callback: a password sign-in, say
        try:
            document = issuer_document()
        except IssuerUnavailable:
            return None
        self.OIDC_OP_TOKEN_ENDPOINT = document["token_endpoint"]
        self.OIDC_OP_USER_ENDPOINT = document.get("userinfo_endpoint")
        self.OIDC_RP_CLIENT_ID = settings.MOBKIT_OIDC_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.MOBKIT_OIDC_CLIENT_SECRET
        try:
            return super().authenticate(request, **kwargs)
        except (SuspiciousOperation, requests.RequestException) as error:
            # A refused token or an unreachable provider: a failed sign-in (audited), not an error page.
            logger.warning("OIDC sign-in failed: %s", error)
            return None

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        try:
            claims = verified_claims(token, audience=settings.MOBKIT_OIDC_CLIENT_ID)
        except (InvalidToken, IssuerUnavailable) as error:
            raise SuspiciousOperation(f"ID token refused: {error}") from error
        if claims.get("nonce") != kwargs.get("nonce"):
            raise SuspiciousOperation("ID token refused: the nonce is not this sign-in's")
        self.id_claims = claims
        return claims

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> dict[str, Any]:
        # The ID token's claims, completed by userinfo when the issuer has it (userinfo wins: fresher).
        userinfo = super().get_userinfo(access_token, id_token, payload) if self.OIDC_OP_USER_ENDPOINT else {}
        return {**payload, **userinfo}

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        claims = self.get_userinfo(access_token, id_token, payload)
        try:
            identity = identity_from_claims(claims)
        except InvalidToken as error:
            raise SuspiciousOperation(str(error)) from error
        setattr(self.request, _REQUEST_VOUCHED, identity.groups)
        return user_for_subject(identity.subject)


class ConsoleOIDCAuthenticationRequestView(OIDCAuthenticationRequestView):
    """``/console/oidc/authenticate/``: off (404) unless browser sign-in is configured."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super(OIDCAuthenticationRequestView, self).__init__(*args, **kwargs)
        self.OIDC_RP_CLIENT_ID = settings.MOBKIT_OIDC_CLIENT_ID

    def get(self, request: HttpRequest) -> HttpResponse:
        if not oidc_browser_enabled():
            raise Http404("sign-in through an identity provider is not configured")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = issuer_document()["authorization_endpoint"]
        except (IssuerUnavailable, KeyError) as error:
            raise Http404("the identity provider cannot be reached") from error
        return super().get(request)


class ConsoleOIDCCallbackView(OIDCAuthenticationCallbackView):
    """``/console/oidc/callback/``: keeps the groups the issuer vouched for in the new session."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if not oidc_browser_enabled():
            raise Http404("sign-in through an identity provider is not configured")
        if "error" not in request.GET and request.GET.get("state") not in request.session.get("oidc_states", {}):
            # docs/audit-and-oidc.md §6: a replayed or forged callback, or one that outlived its
            # session, is a failed sign-in and a notice on the sign-in page (the library: a bare 400).
            reason = "the callback's state is not one a sign-in in this browser is waiting for"
            actor = Actor(client=request.META.get("REMOTE_ADDR", ""))
            audit_record(action="sign_in", outcome="failed", detail={"method": "oidc", "reason": reason}, actor=actor)
            return HttpResponseRedirect(STALE_CALLBACK_URL)
        return super().get(request)

    def login_success(self) -> HttpResponse:
        response = super().login_success()
        self.request.session[SESSION_GROUPS] = sorted(getattr(self.request, _REQUEST_VOUCHED, ()))
        return response
