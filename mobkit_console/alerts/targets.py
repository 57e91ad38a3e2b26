"""Where a notification goes: any Apprise URL, or the console's own signed JSON webhook
(``mobkit+https://…``, ``mobkit+http://…``), signed with HMAC-SHA256 (docs/alerts.md §3)."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol

from django.conf import settings

SIGNED_SCHEMES = {"mobkit+http": "http", "mobkit+https": "https"}
TIMESTAMP_HEADER = "X-Mobkit-Alert-Timestamp"
SIGNATURE_HEADER = "X-Mobkit-Alert-Signature"
ALERT_ID_HEADER = "X-Mobkit-Alert-Id"
SEND_TIMEOUT_S = 5.0
_STATUS = re.compile(r"error=(\d{3})\b")


class TargetError(Exception):
    """A notify URL no channel understands, or a signed webhook without its secret."""


@dataclass(frozen=True)
class Outcome:
    ok: bool
    status_code: int | None  # the receiver's HTTP status, when the channel reports one
    detail: str  # a short line for the delivery log; never the notification's text


class Target(Protocol):
    label: str  # the URL with secrets masked: what the page and the log show

    def send(self, payload: dict[str, Any]) -> Outcome: ...


def signature(secret: bytes, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>`` of HMAC-SHA256 over ``<timestamp>.<body>`` (docs/alerts.md §3.2)."""
    return "sha256=" + hmac.new(secret, timestamp.encode("ascii") + b"." + body, hashlib.sha256).hexdigest()


class SignedWebhook:
    def __init__(self, url: str) -> None:
        scheme, rest = url.split("://", 1)
        self.url = f"{SIGNED_SCHEMES[scheme]}://{rest}"
        self.label = f"{scheme}://{rest.split('?', 1)[0]}"
        secret = getattr(settings, "MOBKIT_ALERTS_WEBHOOK_SECRET", None)
        if not secret:
            raise TargetError(f"{self.label} is a signed webhook: set MOBKIT_ALERTS_WEBHOOK_SECRET")
        self.secret = secret.encode("utf-8")

    def send(self, payload: dict[str, Any]) -> Outcome:
        body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
        timestamp = str(int(time.time()))
        request = urllib.request.Request(self.url, data=body, method="POST", headers={
            "Content-Type": "application/json",
            TIMESTAMP_HEADER: timestamp,
            SIGNATURE_HEADER: signature(self.secret, timestamp, body),
            ALERT_ID_HEADER: str(payload.get("alert_id", "")),
        })
        try:
            with urllib.request.urlopen(request, timeout=SEND_TIMEOUT_S) as response:  # noqa: S310 - operator's URL
                return Outcome(True, response.status, "delivered")
        except urllib.error.HTTPError as error:
            return Outcome(False, error.code, f"receiver answered {error.code}")
        except (urllib.error.URLError, OSError) as error:
            return Outcome(False, None, f"not delivered: {getattr(error, 'reason', error)}"[:200])


def _apprise() -> Any:
    # Imported on first use: it takes about half a second, which a process whose rules name no
    # Apprise URL (or that has no rules) need not pay at every start.
    import apprise

    return apprise


class AppriseTarget:
    def __init__(self, url: str) -> None:
        self.plugin = _apprise().Apprise.instantiate(url, suppress_exceptions=True)
        if not self.plugin:
            raise TargetError(f"{url.split('://', 1)[0]}:// is neither an Apprise URL nor mobkit+https://")
        self.label = self.plugin.url(privacy=True)

    def send(self, payload: dict[str, Any]) -> Outcome:
        apprise = _apprise()
        notify_type = apprise.NotifyType.SUCCESS if payload["notice"] == "resolved" else apprise.NotifyType.WARNING
        with apprise.LogCapture(level=logging.INFO) as captured:
            ok = bool(self.plugin.notify(title=payload["title"], body=payload["body"], notify_type=notify_type))
            logged = captured.getvalue()
        found = _STATUS.search(logged)
        lines = [line.strip() for line in logged.splitlines() if line.strip()]
        detail = "delivered" if ok else (lines[-1] if lines else "not delivered")
        return Outcome(ok, int(found[1]) if found else None, detail[:200])


def target_for(url: str) -> Target:
    """The channel ``url`` names; TargetError when none does."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme in SIGNED_SCHEMES:
        return SignedWebhook(url)
    return AppriseTarget(url)


def target_label(url: str) -> str:
    """``url`` with its secrets masked, or what is wrong with it."""
    try:
        return target_for(url).label
    except TargetError as error:
        return str(error)
