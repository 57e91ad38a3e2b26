"""The company's OpenID Connect issuer: its JWT bearer tokens and ID tokens (docs/audit-and-oidc.md §4-§6).

PyJWT checks everything: the signature against a key of the issuer's JWKS (found through its
discovery document, cached, fetched again when a token names a key id it does not hold), the
pinned algorithms, ``iss``, ``aud``, ``exp`` and ``nbf``. Nothing here does cryptography itself.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import jwt
from django.conf import settings

# Asymmetric only: a token can never choose "none" or an HMAC keyed by something public.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384")
# docs/audit-and-oidc.md §4: clocks of the console and the issuer may differ by this much.
LEEWAY_S = 30
DISCOVERY_TTL_S = 3600.0
FETCH_TIMEOUT_S = 5.0
# The subject becomes a console username (accounts/tokens.py user_for_subject): Django's limit.
SUBJECT_MAX = 150


class InvalidToken(Exception):
    """A token this issuer did not sign, or signed for someone else, or that has expired: a 401."""


class IssuerUnavailable(Exception):
    """The issuer's discovery document or keys could not be fetched, so no token can be checked."""


@dataclass(frozen=True)
class TokenIdentity:
    subject: str
    groups: frozenset[str]


def looks_like_jwt(raw: str) -> bool:
    """Three dot-separated parts: a compact JWS. Console tokens (``mkc_…``) never have a dot."""
    return raw.count(".") == 2


def oidc_bearer_enabled() -> bool:
    return bool(settings.MOBKIT_OIDC_ISSUER and settings.MOBKIT_OIDC_AUDIENCE)


def oidc_browser_enabled() -> bool:
    """docs/audit-and-oidc.md §6: browsers may sign in through the issuer once it has a client for us."""
    return bool(settings.MOBKIT_OIDC_ISSUER and settings.MOBKIT_OIDC_CLIENT_ID and settings.MOBKIT_OIDC_CLIENT_SECRET)


def token_identity(raw: str) -> TokenIdentity:
    """Who a JWT bearer token names; InvalidToken saying why it is refused, IssuerUnavailable."""
    return identity_from_claims(verified_claims(raw, audience=settings.MOBKIT_OIDC_AUDIENCE))


def identity_from_claims(claims: dict[str, Any]) -> TokenIdentity:
    """The access.toml subject (MOBKIT_OIDC_SUBJECT_CLAIM) and groups a set of verified claims name."""
    subject = claims.get(settings.MOBKIT_OIDC_SUBJECT_CLAIM)
    if not isinstance(subject, str) or not subject.strip():
        raise InvalidToken(f"the token has no {settings.MOBKIT_OIDC_SUBJECT_CLAIM} claim")
    if len(subject.strip()) > SUBJECT_MAX:
        raise InvalidToken(f"the {settings.MOBKIT_OIDC_SUBJECT_CLAIM} claim is longer than {SUBJECT_MAX} characters")
    return TokenIdentity(subject=subject.strip(), groups=claim_groups(claims))


def verified_claims(raw: str, *, audience: str) -> dict[str, Any]:
    """The claims of a JWT the configured issuer signed for ``audience`` (a bearer token's audience,
    or the client id for a browser sign-in's ID token); InvalidToken or IssuerUnavailable."""
    return _issuer().claims(raw, audience=audience)


def issuer_document() -> dict[str, Any]:
    """The configured issuer's discovery document (cached; IssuerUnavailable when it cannot be read)."""
    return _issuer().document()


def claim_groups(claims: dict[str, Any]) -> frozenset[str]:
    """The groups claim (MOBKIT_OIDC_GROUPS_CLAIM) as names: a list of strings, or one string."""
    name = settings.MOBKIT_OIDC_GROUPS_CLAIM
    value = claims.get(name) if name else None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return frozenset()
    return frozenset(item for item in value if isinstance(item, str) and item)


def discovery(issuer: str) -> dict[str, Any]:
    """The issuer's discovery document; its ``issuer`` must be the one configured (OIDC Discovery §4.3)."""
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response:
            document = json.loads(response.read())
    except (OSError, ValueError) as error:
        raise IssuerUnavailable(f"{url}: {error}") from error
    if not isinstance(document, dict) or document.get("issuer") != issuer or not isinstance(document.get("jwks_uri"), str):
        raise IssuerUnavailable(f"{url} does not describe the issuer {issuer}")
    return document


class _Issuer:
    """One issuer: its discovery document, re-read hourly, and PyJWT's JWKS client for its keys."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        self._document: dict[str, Any] = {}
        self._jwks: jwt.PyJWKClient | None = None
        self._fetched_at = 0.0
        self._lock = threading.Lock()

    def document(self) -> dict[str, Any]:
        self._keys()
        return self._document

    def _keys(self) -> jwt.PyJWKClient:
        with self._lock:
            if self._jwks is None or time.monotonic() - self._fetched_at > DISCOVERY_TTL_S:
                self._document = document = discovery(self.issuer)
                # The key set is cached (5 minutes) and fetched again for an unknown kid; single keys
                # are not cached apart from it, so a key the issuer withdrew stops verifying with it.
                self._jwks = jwt.PyJWKClient(
                    document["jwks_uri"],
                    cache_keys=False,
                    timeout=FETCH_TIMEOUT_S,
                    cooldown_duration=settings.MOBKIT_OIDC_JWKS_REFETCH_COOLDOWN_S,
                )
                self._fetched_at = time.monotonic()
            return self._jwks

    def claims(self, raw: str, *, audience: str) -> dict[str, Any]:
        try:
            key = self._keys().get_signing_key_from_jwt(raw)
            return jwt.decode(
                raw,
                key.key,
                algorithms=list(ALGORITHMS),
                audience=audience,
                issuer=self.issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWKClientConnectionError as error:
            raise IssuerUnavailable(str(error)) from error
        except jwt.PyJWTError as error:  # every signature, claim and key-lookup failure
            raise InvalidToken(str(error)) from error


_issuers: dict[str, _Issuer] = {}
_issuers_lock = threading.Lock()


def _issuer() -> _Issuer:
    issuer = settings.MOBKIT_OIDC_ISSUER
    if not issuer:
        raise IssuerUnavailable("MOBKIT_OIDC_ISSUER is not set")
    with _issuers_lock:
        if issuer not in _issuers:
            _issuers[issuer] = _Issuer(issuer)
        return _issuers[issuer]
