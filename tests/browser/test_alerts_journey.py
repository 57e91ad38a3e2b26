"""An admin's alerts journey in Chromium (docs/alerts.md §6): the rules with their state, a test
notification sent from the page to a real receiver, its attempt in the log; no CSP violation."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from mobkit_console.alerts.config import load_alert_rules_at_startup
from tests.support.alert_receivers import SignedReceiver

pytestmark = pytest.mark.browser

SECRET = "browser-journey-secret"


@pytest.fixture
def receiver():
    server = SignedReceiver(SECRET)
    yield server
    server.close()


def test_an_admin_sends_a_test_notification_and_reads_its_delivery(
        agent_memory_dir, user_with_password, browser_for, receiver, settings, tmp_path):
    rules = tmp_path / "alerts.toml"
    rules.write_text(f'[[rules]]\nid = "held-writes"\nwhen = "quarantine.arrived"\nnotify = ["{receiver.url}"]\n')
    settings.MOBKIT_ALERTS_WEBHOOK_SECRET = SECRET
    settings.MOBKIT_ALERTS_CONFIG = rules
    load_alert_rules_at_startup()
    username = user_with_password("boss@example.test")
    get_user_model().objects.filter(username=username).update(is_superuser=True)  # a console admin
    try:
        browser = browser_for()
        browser.sign_in(username, "/console/alerts/")
        page = browser.page
        assert page.get_by_role("rowheader", name="held-writes").is_visible()
        assert "holding" in page.locator(".alerts__rules").inner_text()
        with page.expect_navigation():
            page.get_by_role("button", name="Send a test notification").click()
        assert page.get_by_role("status").filter(has_text="Test notification sent").is_visible()
        log = page.locator("#alerts-log").inner_text()
        assert "test" in log and "delivered" in log and "200" in log
        assert [notice["notice"] for notice in receiver.received] == ["test"]
        browser.screenshot("alerts")
        browser.assert_clean()
    finally:
        settings.MOBKIT_ALERTS_CONFIG = None
        load_alert_rules_at_startup()
