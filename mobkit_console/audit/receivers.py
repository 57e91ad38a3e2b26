"""The audit log's receivers: each audited action, from the signal that announces it (docs/audit-and-oidc.md §1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.dispatch import Signal
from django.http import HttpRequest

from access.caller import Access, caller_for_user
from access.signals import access_config_reloaded
from memory_panel import signals as memory
from mobkit_console.audit.services import NOBODY, Actor, actor_for, audit_entry, audit_record, audit_write_now

# The console's own sign-in backends, as the audit log names the way a session began.
_SESSION_BACKENDS = {
    "django.contrib.auth.backends.ModelBackend": "password",
    "mobkit_console.accounts.oidc_browser.ConsoleOIDCBackend": "oidc",
}


def quarantined_bodies_read(*, access: Access, reads: list[tuple[str, str]], **_: Any) -> None:
    # Written before the body is shown; an exception here refuses the read (memory_panel/signals.py).
    audit_write_now(
        audit_entry(action="quarantine.body.read", realm=realm, target=record_id) for realm, record_id in reads
    )


def access_denied(*, access: Access, action: str, resource: str | None, **_: Any) -> None:
    audit_record(action="access.denied", outcome="denied", target=resource, detail={"missing": action})


def records_exported(
    *, realm: str | None, format: str, filters: dict[str, str], rows: int, complete: bool, **_: Any
) -> None:
    audit_record(
        action="records.export",
        outcome="ok" if complete else "partial",
        realm=realm,
        detail={"format": format, "filters": filters, "rows": rows},
    )


def records_searched(*, realm: str | None, query: str, surface: str, **_: Any) -> None:
    audit_record(action="records.search", realm=realm, detail={"query": query, "surface": surface})


def signed_in(*, request: HttpRequest, user: Any, **_: Any) -> None:
    method = _SESSION_BACKENDS.get(getattr(user, "backend", ""), "session")
    caller = caller_for_user(user, sign_in="oidc" if method == "oidc" else "session")
    audit_record(action="sign_in", detail={"method": method}, actor=actor_for(request, caller=caller))


def sign_in_failed(*, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any) -> None:
    # Django passes the credentials with secrets masked; the username tried is the subject claimed.
    claimed = str(credentials.get("username") or "")
    actor = replace(actor_for(request), subject=claimed) if request is not None else Actor(subject=claimed)
    # The OIDC callback authenticates with the sign-in's PKCE verifier, a password form with a username.
    method = "oidc" if "code_verifier" in credentials else "password"
    audit_record(action="sign_in", outcome="failed", detail={"method": method}, actor=actor)


def access_reloaded(*, added: list[str], removed: list[str], changed: list[str], revision: str, **_: Any) -> None:
    # The console itself reloaded the file: no request's caller did it.
    detail = {"added": added, "removed": removed, "changed": changed, "revision": revision}
    audit_record(action="access.reload", detail=detail, actor=NOBODY)


RECEIVERS: tuple[tuple[Signal, Callable[..., None]], ...] = (
    (memory.quarantined_bodies_read, quarantined_bodies_read),
    (memory.access_denied, access_denied),
    (memory.records_exported, records_exported),
    (memory.records_searched, records_searched),
    (user_logged_in, signed_in),
    (user_login_failed, sign_in_failed),
    (access_config_reloaded, access_reloaded),
)
DISPATCH_UID = "mobkit_console.audit"


def connect() -> None:
    for signal, receiver in RECEIVERS:
        signal.connect(receiver, dispatch_uid=DISPATCH_UID)


def disconnect() -> None:
    """The audit log stops listening (bench/audit.py times pages with it off)."""
    for signal, _ in RECEIVERS:
        signal.disconnect(dispatch_uid=DISPATCH_UID)
