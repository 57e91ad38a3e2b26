"""The company's OpenID Connect issuer: its JWT bearer tokens and ID tokens (docs/audit-and-oidc.md §4-§6).

PyJWT checks the signature against a key of the issuer's JWKS, the pinned algorithms, ``iss``,
``aud``, ``exp`` and ``nbf``; this module fetches the discovery document and the JWKS (one fetch at
a time per document, cooled down after each, never holding up a caller whose key is cached) and
checks what PyJWT leaves open: the claims' types and the subject.
"""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

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
# docs/audit-and-oidc.md §4: a NumericDate (RFC 7519 §2) is a JSON number of seconds, at most
# 9999-12-31T23:59:59Z, the last instant a date can name.
NUMERIC_DATE_MAX = 253402300799
NUMERIC_DATE_CLAIMS = ("exp", "nbf", "iat")


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
    name = settings.MOBKIT_OIDC_SUBJECT_CLAIM
    subject = claims.get(name)
    if not isinstance(subject, str) or not subject.strip():
        raise InvalidToken(f"the token has no {name} claim")
    subject = subject.strip()
    # docs/audit-and-oidc.md §4: the subject becomes a username and the audit log's subject; PostgreSQL
    # cannot store a NUL, and a control character or line break would forge what an operator reads.
    if not subject.isprintable():
        raise InvalidToken(f"the {name} claim holds a control or format character")
    if len(subject) > SUBJECT_MAX:
        raise InvalidToken(f"the {name} claim is longer than {SUBJECT_MAX} characters")
    if name == "email" and settings.MOBKIT_OIDC_REQUIRE_EMAIL_VERIFIED and not email_verified(claims):
        # An address the provider never verified is one its user typed: anyone's, the admin's too.
        raise InvalidToken("the token's email is not verified (email_verified is not true)")
    return TokenIdentity(subject=subject, groups=claim_groups(claims))


def email_verified(claims: dict[str, Any]) -> bool:
    """``email_verified`` is true: JSON true, or the string some providers' userinfo sends (Cognito)."""
    return claims.get("email_verified") in (True, "true")


def verified_claims(raw: str, *, audience: str) -> dict[str, Any]:
    """The claims of a JWT the configured issuer signed for ``audience`` (a bearer token's audience,
    or the client id for a browser sign-in's ID token); InvalidToken or IssuerUnavailable."""
    return _issuer().claims(raw, audience=audience)


def issuer_document() -> dict[str, Any]:
    """The configured issuer's discovery document (cached; IssuerUnavailable when it cannot be read)."""
    return _issuer().document()


def claim_groups(claims: dict[str, Any]) -> frozenset[str]:
    """The groups claim (MOBKIT_OIDC_GROUPS_CLAIM) as names: a list of strings, or one string. A name
    with a control or format character is no group's (access.toml's names are printable)."""
    name = settings.MOBKIT_OIDC_GROUPS_CLAIM
    value = claims.get(name) if name else None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return frozenset()
    return frozenset(item for item in value if isinstance(item, str) and item and item.isprintable())


def numeric_dates_checked(claims: dict[str, Any]) -> dict[str, Any]:
    """``claims`` when each of exp, nbf and iat it has is a NumericDate; InvalidToken otherwise. PyJWT
    reads them with int(), which takes "9999999999" and 1e30 (docs/audit-and-oidc.md §4)."""
    for name in NUMERIC_DATE_CLAIMS:
        value = claims.get(name)
        if name in claims and not (
            isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and 0 <= value <= NUMERIC_DATE_MAX
        ):
            raise InvalidToken(f"the {name} claim is not a date: a number of seconds up to the year 9999")
    return claims


def _fetch_json(url: str) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response:
            document = json.loads(response.read())
    except (OSError, ValueError) as error:
        raise IssuerUnavailable(f"{url}: {error}") from error
    if not isinstance(document, dict):
        raise IssuerUnavailable(f"{url} did not answer a JSON object")
    return document


def discovery(issuer: str) -> dict[str, Any]:
    """The issuer's discovery document; its ``issuer`` must be the one configured (OIDC Discovery §4.3)."""
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    document = _fetch_json(url)
    if document.get("issuer") != issuer or not isinstance(document.get("jwks_uri"), str):
        raise IssuerUnavailable(f"{url} does not describe the issuer {issuer}")
    return document


def signing_keys(jwks_uri: str) -> dict[str, jwt.PyJWK]:
    """The keys of a JWKS that verify signatures, by key id (a key without an id cannot be named)."""
    try:
        key_set = jwt.PyJWKSet.from_dict(_fetch_json(jwks_uri))
    except jwt.PyJWTError as error:
        raise IssuerUnavailable(f"{jwks_uri}: {error}") from error
    return {key.key_id: key for key in key_set.keys if key.key_id and key.public_key_use in ("sig", None)}


Fetched = TypeVar("Fetched")


@dataclass
class _Flight:
    """A fetch under way; the callers that need its result wait for ``done``."""

    done: threading.Event = field(default_factory=threading.Event)
    error: str | None = None


class _Kept(Generic[Fetched]):
    """A document fetched from the issuer (docs/audit-and-oidc.md §4): kept until a fetch replaces it,
    fetched by one thread at a time, whose result every caller that needs it shares, and fetched
    again only MOBKIT_OIDC_FETCH_COOLDOWN_S after the last fetch ended, however that ended. No lock
    is held while fetching: a caller served from what is kept never waits for the issuer. A caller
    waits for a fetch only in a seat of ``waiting``; with none free it is refused at once."""

    def __init__(self, fetch: Callable[[], Fetched], *, waiting: threading.BoundedSemaphore) -> None:
        self._fetch = fetch
        self._waiting = waiting
        self._value: Fetched | None = None
        self._fetched_at = -math.inf
        self._ended_at = -math.inf  # of the last fetch, good or failed: the cool-down runs from here
        self._error: str | None = None  # the last fetch's, None when it succeeded
        self._flight: _Flight | None = None
        self._lock = threading.Lock()  # guards the fields above for a moment, never across a fetch

    def kept(self, *, max_age_s: float) -> Fetched | None:
        """What the last good fetch got, at once; when it is older than ``max_age_s``, a fetch
        replaces it in the background (it stays in force if that fails)."""
        with self._lock:
            if self._value is not None and time.monotonic() - self._fetched_at > max_age_s:
                self._flight_now()
            return self._value

    def fetched(self) -> Fetched:
        """A fresh copy: the result of the fetch under way, or of one started now; within the
        cool-down, the last fetch's result stands (IssuerUnavailable if it failed)."""
        with self._lock:
            flight = self._flight_now()
            if flight is None:
                if self._error is not None:
                    raise IssuerUnavailable(f"{self._error} (not asked again for a while)")
                return self._value  # the last fetch succeeded
        if not self._waiting.acquire(blocking=False):
            raise IssuerUnavailable("enough callers are waiting for the identity provider already")
        try:
            answered = flight.done.wait(FETCH_TIMEOUT_S)
        finally:
            self._waiting.release()
        if not answered:
            raise IssuerUnavailable("the identity provider has not answered in time")
        if flight.error is not None:
            raise IssuerUnavailable(flight.error)
        return self._value  # this fetch succeeded

    def _flight_now(self) -> _Flight | None:
        """The fetch under way, or a new one unless the cool-down runs; the caller holds the lock."""
        if self._flight is None and time.monotonic() - self._ended_at >= settings.MOBKIT_OIDC_FETCH_COOLDOWN_S:
            self._flight = _Flight()
            threading.Thread(target=self._run, args=(self._flight,), name="oidc-fetch", daemon=True).start()
        return self._flight

    def _run(self, flight: _Flight) -> None:
        value, error = None, None
        try:
            value = self._fetch()
        except Exception as failure:  # raised in this thread, it would reach no caller: the waiters get it
            error = str(failure) or type(failure).__name__
        with self._lock:
            if error is None:
                self._value, self._fetched_at = value, time.monotonic()
            self._error, self._ended_at, self._flight = error, time.monotonic(), None
        flight.error = error
        flight.done.set()


class _Issuer:
    """One issuer: its discovery document, re-read hourly, and the signing keys of its JWKS, re-read
    every MOBKIT_OIDC_KEYS_MAX_AGE_S and when a token names a key id they lack."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        # docs/audit-and-oidc.md §4: callers waiting for the issuer hold at most half the request
        # threads (MOBKIT_HTTP_THREADS), so console tokens and cached keys always find one free.
        waiting = threading.BoundedSemaphore(max(1, settings.MOBKIT_HTTP_THREADS // 2))
        self._document: _Kept[dict[str, Any]] = _Kept(lambda: discovery(issuer), waiting=waiting)
        self._keys: _Kept[dict[str, jwt.PyJWK]] = _Kept(
            lambda: signing_keys(self.document()["jwks_uri"]), waiting=waiting
        )

    def document(self) -> dict[str, Any]:
        return self._document.kept(max_age_s=DISCOVERY_TTL_S) or self._document.fetched()

    def signing_key(self, kid: str) -> jwt.PyJWK:
        keys = self._keys.kept(max_age_s=settings.MOBKIT_OIDC_KEYS_MAX_AGE_S)
        if keys is None or kid not in keys:
            self.document()  # a caller waits for discovery here, not inside the key set's fetch
            keys = self._keys.fetched()
        if kid not in keys:
            raise InvalidToken("the token's key id (kid) is none of the issuer's signing keys")
        return keys[kid]

    def claims(self, raw: str, *, audience: str) -> dict[str, Any]:
        try:
            kid = jwt.get_unverified_header(raw).get("kid")
        except jwt.PyJWTError as error:
            raise InvalidToken(str(error)) from error
        if not isinstance(kid, str) or not kid:
            raise InvalidToken("the token names no key id (kid)")
        key = self.signing_key(kid)
        try:
            claims = jwt.decode(
                raw,
                key.key,
                algorithms=list(ALGORITHMS),
                audience=audience,
                issuer=self.issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as error:  # every signature and claim failure
            raise InvalidToken(str(error)) from error
        return numeric_dates_checked(claims)


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
