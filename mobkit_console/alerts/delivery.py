"""Delivering notices at least once: retries with back-off, a claim so two workers never send the
same attempt, and a log of every attempt (docs/alerts.md §3)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from mobkit_console.observability import metrics

from .models import Delivery, DeliveryAttempt
from .notices import notice_payload
from .definitions import AlertRule
from .targets import TargetError, target_for, target_label

logger = logging.getLogger("mobkit_console.alerts")

SEND_BATCH = 50
CLAIM_MS = 60_000  # a claimed delivery whose worker died is tried again after this
BACKOFF_CAP_S = 900.0


def deliveries_enqueue(*, rule_id: str, targets: Sequence[str], alert_id: str, notice: str,
                       payload: dict[str, Any], now: int) -> int:
    """Owe ``payload`` to each of ``targets`` (notify URLs); a notice already owed is not owed twice."""
    created = 0
    for url in targets:
        label = target_label(url)
        try:
            with transaction.atomic():
                Delivery.objects.create(alert_id=alert_id, notice=notice, rule_id=rule_id, target=url,
                                        target_label=label, payload=payload, next_attempt_ms=now, created_ms=now)
            created += 1
        except IntegrityError:
            continue
    return created


def backoff_ms(attempts: int) -> int:
    """Delay before the next try after ``attempts`` failed ones: doubling from the base, capped."""
    return int(min(settings.MOBKIT_ALERTS_RETRY_BASE_S * 2 ** (attempts - 1), BACKOFF_CAP_S) * 1000)


def deliveries_send_due(*, now: int, ids: list[int] | None = None) -> int:
    """Try each pending delivery whose time has come (or those of ``ids``); how many were sent."""
    due = Delivery.objects.filter(status="pending", next_attempt_ms__lte=now)
    if ids is not None:
        due = due.filter(id__in=ids)
    sent = 0
    for delivery in list(due.order_by("id")[:SEND_BATCH]):
        # The claim: only the worker whose update matched sends this attempt.
        claimed = Delivery.objects.filter(id=delivery.id, status="pending",
                                          next_attempt_ms=delivery.next_attempt_ms).update(next_attempt_ms=now + CLAIM_MS)
        if claimed != 1:
            continue
        sent += _attempt(delivery, now)
    return sent


def _attempt(delivery: Delivery, now: int) -> int:
    metrics.alert_deliveries_attempted.inc()
    try:
        outcome = target_for(delivery.target).send(delivery.payload)
        ok, status_code, detail = outcome.ok, outcome.status_code, outcome.detail
    except TargetError as error:
        ok, status_code, detail = False, None, str(error)[:200]
    except Exception as error:  # noqa: BLE001 - a channel's bug is one failed attempt, retried
        logger.exception("alert delivery %s failed", delivery.id)
        ok, status_code, detail = False, None, f"failed: {type(error).__name__}"
    delivery.attempts += 1
    if ok:
        delivery.status = "sent"
    else:
        metrics.alert_deliveries_failed.inc()
        if delivery.attempts >= settings.MOBKIT_ALERTS_MAX_ATTEMPTS:
            delivery.status = "dropped"
            metrics.alert_deliveries_dropped.inc()
            logger.error("alert delivery %s to %s dropped after %d attempts", delivery.id, delivery.target_label,
                         delivery.attempts)
        else:
            delivery.next_attempt_ms = now + backoff_ms(delivery.attempts)
    with transaction.atomic():
        DeliveryAttempt.objects.create(delivery=delivery, at_ms=now, ok=ok, status_code=status_code, detail=detail)
        delivery.save(update_fields=["attempts", "status", "next_attempt_ms"])
    return int(ok)


def deliveries_test(*, rule: AlertRule, now: int) -> list[int]:
    """A test notice to each of the rule's receivers, tried at once; retried like any other."""
    alert_id = "test-" + uuid.uuid4().hex[:19]
    payload = notice_payload(rule_id=rule.id, condition=rule.when, alert_id=alert_id, notice="test", key="test",
                             since_ms=now, count=0, summary="a test notification from the console", lines=[],
                             now_ms=now)
    deliveries_enqueue(rule_id=rule.id, targets=rule.notify, alert_id=alert_id, notice="test", payload=payload,
                       now=now)
    ids = list(Delivery.objects.filter(alert_id=alert_id).values_list("id", flat=True))
    deliveries_send_due(now=now, ids=ids)
    return ids
