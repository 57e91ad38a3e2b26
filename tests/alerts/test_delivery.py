"""Delivery to real receivers on loopback: the signed webhook verified by its receiver, retries
with back-off ending in exactly one notice, email through Apprise to a real SMTP server."""

from __future__ import annotations

import hmac
import time

import pytest

from mobkit_console.alerts.conditions import now_ms
from mobkit_console.alerts.delivery import deliveries_send_due, deliveries_test
from mobkit_console.alerts.models import Delivery, DeliveryAttempt
from mobkit_console.alerts.targets import signature
from mobkit_console.observability import metrics

pytestmark = pytest.mark.django_db

RULE = '[[rules]]\nid = "{id}"\nwhen = "quarantine.arrived"\nnotify = [{urls}]\n'


def send_until_settled(rounds: int = 20) -> None:
    for _ in range(rounds):
        if not Delivery.objects.filter(status="pending").exists():
            return
        deliveries_send_due(now=now_ms())
        time.sleep(0.03)


def test_the_signature_is_hmac_sha256_of_timestamp_dot_body():
    # The verification snippet in docs/alerts.md §3.2 computes exactly this.
    assert signature(b"k", "1700000000", b"{}") == "sha256=" + hmac.new(b"k", b"1700000000.{}", "sha256").hexdigest()


def counted() -> tuple[float, float, float]:
    return (metrics.alert_deliveries_attempted._value.get(), metrics.alert_deliveries_failed._value.get(),
            metrics.alert_deliveries_dropped._value.get())


def test_a_receiver_failing_twice_gets_exactly_one_notice_after_retries(alert_rules, flaky_receiver):
    rules = alert_rules(RULE.format(id="flaky", urls=f'"{flaky_receiver.url}"'))
    before = counted()
    deliveries_test(rule=rules.by_id["flaky"], now=now_ms())
    send_until_settled()
    assert len(flaky_receiver.received) == 1 and flaky_receiver.bad_signatures == 0
    attempts = list(DeliveryAttempt.objects.order_by("id").values_list("ok", "status_code"))
    assert attempts == [(False, 500), (False, 500), (True, 200)]
    assert Delivery.objects.get().status == "sent"
    assert tuple(after - was for after, was in zip(counted(), before)) == (3, 2, 0)


def test_a_receiver_that_never_answers_is_dropped_after_the_last_attempt(alert_rules, settings):
    rules = alert_rules(RULE.format(id="gone", urls='"mobkit+http://127.0.0.1:9/nothing-listens"'))
    dropped = metrics.alert_deliveries_dropped._value.get()
    deliveries_test(rule=rules.by_id["gone"], now=now_ms())
    send_until_settled()
    delivery = Delivery.objects.get()
    assert delivery.status == "dropped" and delivery.attempts == settings.MOBKIT_ALERTS_MAX_ATTEMPTS
    assert metrics.alert_deliveries_dropped._value.get() == dropped + 1


def test_email_through_apprise_reaches_a_real_smtp_server(alert_rules, smtp):
    rules = alert_rules(RULE.format(id="mail", urls=f'"{smtp.mailto_url("ops@example.test")}"'))
    deliveries_test(rule=rules.by_id["mail"], now=now_ms())
    send_until_settled()
    assert len(smtp.messages) == 1
    sender, recipients, content = smtp.messages[0]
    assert recipients == ["ops@example.test"]
    assert b"[TEST] mail" in content
    assert DeliveryAttempt.objects.get().ok
