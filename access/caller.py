"""Who is asking, and what they may do: what every view, RPC method, selector and consumer asks
(docs/access.md §2).

Every sign-in path (a session, a console token, a JWT, the issuer's browser flow; HTTP and sockets)
produces one `Caller`: the subject, the groups an identity provider vouched for, and how it signed
in. Every gate takes that value, never a bare subject, so no surface can drop a caller's groups.
Build one `Access` per request with `access_for(caller)` and pass it down; it snapshots the config
in force, so one request is decided by one config even if the file changes meanwhile.

The console has no roster, so an agent is known only by its identity: checks use a bare-identity
resource (identity and agent id both set to it, role and labels unknown). As on a MobKit attribute
cache miss (§2.1), role- and label-scoped rules therefore never match here: they fail closed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .config import current_access_config
from .engine import (
    ACCESS_ACTIONS,
    AccessConfig,
    Explanation,
    Principal,
    Resource,
    evaluate,
    explain,
    groups_for_subject,
    is_admin,
    may_perform_anywhere,
)

# An Access built by hand (tests, fixtures) without a config: enforced means nothing is granted.
_NOTHING_GRANTED = AccessConfig(enabled=True)


@dataclass(frozen=True)
class Caller:
    """Who is asking (docs/access.md §2.7): made once per request or socket by the sign-in middlewares."""

    subject: str | None = None  # None: anonymous
    # Groups an identity provider's token or browser sign-in vouched for; those access.toml defines
    # count as if the subject were listed among their members (docs/audit-and-oidc.md §5).
    vouched_groups: frozenset[str] = frozenset()
    # session (password) | oidc (browser sign-in through the issuer) | token | jwt; "" when anonymous.
    sign_in: str = ""
    console_admin: bool = False  # a Django superuser: reads the audit log whatever access.toml says

    @property
    def is_signed_in(self) -> bool:
        return self.subject is not None


ANONYMOUS = Caller()


@dataclass(frozen=True)
class Access:
    subject: str | None
    groups: frozenset[str]
    enforced: bool  # False when no config is set or the config has enabled = false
    is_admin: bool
    config: AccessConfig = field(default=_NOTHING_GRANTED, repr=False, compare=False)
    revision: str = field(default="0", compare=False)
    available: bool = field(default=False, compare=False)  # an access.toml is configured
    console_admin: bool = field(default=False, compare=False)  # Caller.console_admin

    @property
    def principal(self) -> Principal:
        return Principal(subject=self.subject, groups=self.groups)

    def allows(self, action: str, identity: str | None = None) -> bool:
        """May the caller do `action` to agent `identity` (None: a resource-less check)?"""
        if not self.enforced or self.is_admin:
            return True
        return self.explain(action, identity).allowed

    def explain(self, action: str, identity: str | None = None) -> Explanation:
        """``allows`` with its evidence: every rule that matched and the ones that decided (§2.9)."""
        config = self.config if self.enforced else replace(self.config, enabled=False)
        return explain(config, self.principal, action, agent_resource(identity))

    def may_perform_anywhere(self, action: str) -> bool:
        """Coarse: is `action` granted on anything at all (selectors and denies ignored, §2.3)?"""
        if not self.enforced or self.is_admin:
            return True
        return may_perform_anywhere(self.config, self.principal, action)


def agent_resource(identity: str | None) -> Resource | None:
    """The bare-identity resource every check on an agent uses (module doc); None: resource-less."""
    return None if identity is None else Resource(identity=identity, agent_id=identity)


def subject_for_user(user: Any) -> str | None:
    """docs/wire-contract.md §C.1: the email if set, else the username; None when anonymous."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    email = (getattr(user, "email", "") or "").strip()
    return email or user.get_username()


def caller_for_user(user: Any, *, sign_in: str, vouched_groups: frozenset[str] = frozenset()) -> Caller:
    """The caller a signed-in Django user is (anonymous for an anonymous user)."""
    subject = subject_for_user(user)
    if subject is None:
        return ANONYMOUS
    return Caller(
        subject=subject,
        vouched_groups=vouched_groups,
        sign_in=sign_in,
        console_admin=bool(getattr(user, "is_superuser", False)),
    )


def access_for(caller: Caller) -> Access:
    """The caller's access under the access.toml in force now."""
    loaded = current_access_config()
    return _access(caller, config=loaded.config, revision=loaded.revision, available=loaded.available)


def access_as(access: Access, caller: Caller) -> Access:
    """What ``caller`` would get under the same config snapshot as ``access``: one request that
    previews or explains another subject decides by one config (docs/access.md §2.9)."""
    return _access(caller, config=access.config, revision=access.revision, available=access.available)


def _access(caller: Caller, *, config: AccessConfig, revision: str, available: bool) -> Access:
    return Access(
        subject=caller.subject,
        groups=groups_for_subject(config, caller.subject) | (caller.vouched_groups & config.groups.keys()),
        enforced=available and config.enabled,
        is_admin=is_admin(config, caller.subject),
        config=config,
        revision=revision,
        available=available,
        console_admin=caller.console_admin,
    )


def can_administer(access: Access) -> bool:
    # docs/access.md §2.6 bootstrap: while disabled with no admins named, anyone may administer; once admins
    # exist, only they and access.admin grantees may, whether or not the config is enabled yet.
    if not access.available:
        return False
    config = access.config
    if not config.enabled and not any(admin.strip() for admin in config.admins):
        return True
    if access.is_admin:
        return True
    as_enforced = replace(config, enabled=True)
    return evaluate(as_enforced, access.principal, "access.admin", None).allowed


def can_read_access(access: Access) -> bool:
    """Console admins (Django superusers) and whoever may administer access.toml: the readers of the
    audit log, of the access config over JSON-RPC and of the explainer (docs/access.md §2.9)."""
    return access.console_admin or can_administer(access)


def access_status(access: Access) -> dict[str, Any]:
    """The result of `mobkit/access/status` for this caller (docs/access.md §2.6)."""
    return {
        "available": access.available,
        "enabled": access.enforced,
        "revision": access.revision,
        "subject": access.subject,
        "groups": sorted(access.groups),
        "is_admin": access.is_admin,
        "can_administer": can_administer(access),
        "actions": list(ACCESS_ACTIONS),
    }
