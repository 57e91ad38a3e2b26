"""Issuing and resolving bearer tokens; the HTTP and WebSocket middlewares both resolve through here.

A bearer token is a console token (``mkc_…``, issued here) or, when an OpenID Connect issuer is
configured, a JWT it signed (``oidc.py``, docs/audit-and-oidc.md §4).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from access.caller import Caller, caller_for_user, subject_for_user
from mobkit_console.accounts.models import ApiToken
from mobkit_console.accounts.oidc import InvalidToken, looks_like_jwt, oidc_bearer_enabled, token_identity
from mobkit_console.audit.services import Actor, audit_record

TOKEN_PREFIX = "mkc_"
PREFIX_SHOWN = 12
# last_used_at is a hint for operators, not an audit trail: refresh it at most this often so an
# API client does not turn every read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def user_for_subject(subject: str) -> AbstractBaseUser:
    """The user whose subject is ``subject``, created when missing (email too when it has an '@')."""
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(
        username=subject, defaults={"email": subject if "@" in subject else ""}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def token_issue(*, user: AbstractBaseUser) -> str:
    """A new bearer token for ``user``; only its hash is stored, so this is the one time it is seen."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, prefix=raw[:PREFIX_SHOWN], token_sha256=_digest(raw))
    # docs/audit-and-oidc.md §1: tokens are made on the command line, so the entry names their owner.
    audit_record(action="token.create", target=raw[:PREFIX_SHOWN], actor=Actor(subject=subject_for_user(user) or ""))
    return raw


def user_for_token(raw: str) -> AbstractBaseUser | None:
    """The active user a raw bearer token belongs to, or None for an unknown or empty token."""
    raw = raw.strip()
    if not raw:
        return None
    token = ApiToken.objects.select_related("user").filter(token_sha256=_digest(raw)).first()
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user



@dataclass(frozen=True)
class BearerSignIn:
    user: AbstractBaseUser | None  # None: an unknown or empty console token
    method: str  # "token" or "jwt", as the audit log names it
    # docs/audit-and-oidc.md §5: the groups a JWT's issuer vouches for join the subject's access.toml groups.
    vouched_groups: frozenset[str] = frozenset()

    @property
    def caller(self) -> Caller:
        return caller_for_user(self.user, sign_in=self.method, vouched_groups=self.vouched_groups)


def bearer_sign_in(raw: str) -> BearerSignIn:
    """The user a bearer token signs in. A JWT that fails its checks raises InvalidToken (and
    IssuerUnavailable when the issuer's keys cannot be fetched) instead of reading as anonymous."""
    raw = raw.strip()
    if not (oidc_bearer_enabled() and looks_like_jwt(raw)):
        return BearerSignIn(user_for_token(raw), "token")
    identity = token_identity(raw)
    user = user_for_subject(identity.subject)
    if not user.is_active:
        raise InvalidToken("the account of this subject is deactivated")
    return BearerSignIn(user, "jwt", identity.groups)
