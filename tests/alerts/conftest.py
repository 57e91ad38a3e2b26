"""Fixtures for the alert tests: a rules file the console is pointed at, and real receivers.

- ``alert_rules(text)`` → writes the rules file, points MOBKIT_ALERTS_CONFIG at it and loads it.
- ``receiver`` / ``second_receiver`` / ``flaky_receiver`` → a signed-webhook endpoint on loopback
  (the last fails its first two requests with 500).
- ``smtp`` → an SMTP server on loopback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mobkit_console.alerts.config import load_alert_rules_at_startup
from mobkit_console.alerts.definitions import AlertRules
from tests.support.alert_receivers import SignedReceiver, SmtpReceiver

SECRET = "alert-signing-secret-for-tests"


@pytest.fixture(autouse=True)
def _alert_settings(settings) -> None:
    settings.MOBKIT_ALERTS_WEBHOOK_SECRET = SECRET
    settings.MOBKIT_ALERTS_RETRY_BASE_S = 0.01
    settings.MOBKIT_ALERTS_MAX_ATTEMPTS = 4
    settings.MOBKIT_ALERTS_CHECK_INTERVAL_S = 0


@pytest.fixture
def alert_rules(tmp_path: Path, settings) -> Callable[[str], AlertRules]:
    path = tmp_path / "config" / "alerts.toml"
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(text: str) -> AlertRules:
        path.write_text(text)
        settings.MOBKIT_ALERTS_CONFIG = path
        return load_alert_rules_at_startup()

    yield write
    settings.MOBKIT_ALERTS_CONFIG = None
    load_alert_rules_at_startup()


@pytest.fixture
def receiver() -> Iterator[SignedReceiver]:
    server = SignedReceiver(SECRET)
    yield server
    server.close()


@pytest.fixture
def second_receiver() -> Iterator[SignedReceiver]:
    server = SignedReceiver(SECRET)
    yield server
    server.close()


@pytest.fixture
def flaky_receiver() -> Iterator[SignedReceiver]:
    server = SignedReceiver(SECRET, fail_first=2)
    yield server
    server.close()


@pytest.fixture
def smtp() -> Iterator[SmtpReceiver]:
    server = SmtpReceiver()
    yield server
    server.close()
