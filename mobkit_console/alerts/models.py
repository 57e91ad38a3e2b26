"""The evaluator's state in the console database (docs/alerts.md §4): which alerts are open, what
is owed to whom, and every attempt made. A restart or a lease moving to another process resumes
from these rows, so no notification is lost or sent twice by the console."""

from __future__ import annotations

from django.db import models


class AlertCursor(models.Model):
    """How far the evaluator has read the timeline (the last TimelineEvent.seq it evaluated)."""

    name = models.CharField(max_length=32, primary_key=True)
    last_seq = models.BigIntegerField(default=0)
    last_state_check_ms = models.BigIntegerField(default=0)


class AlertState(models.Model):
    """One rule and key (a realm, a realm and an identity, a replica source): firing or holding."""

    rule_id = models.CharField(max_length=64)
    key = models.CharField(max_length=600)
    firing = models.BooleanField(default=False)
    alert_id = models.CharField(max_length=32, blank=True)  # stable for one firing episode: receivers dedupe on it
    since_ms = models.BigIntegerField(default=0)  # firing since, or holding since it resolved
    notified = models.BooleanField(default=False)  # this episode's firing notice was sent (not held by cooldown)
    last_notified_ms = models.BigIntegerField(default=0)
    count = models.IntegerField(default=0)
    summary = models.TextField(blank=True)  # ids and counts only
    # The open episode's receivers and what its rule watched, as opened: its resolved notice goes to
    # them even once the rule is gone from the file or watches something else (docs/alerts.md §2).
    notify = models.JSONField(default=list)
    watches = models.CharField(max_length=600, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rule_id", "key"], name="alerts_state_rule_key")]


class Delivery(models.Model):
    """One notice owed to one receiver; sent at least once, with retries and back-off."""

    alert_id = models.CharField(max_length=32)
    notice = models.CharField(max_length=16)  # firing | resolved | test
    rule_id = models.CharField(max_length=64)
    target = models.TextField()  # the notify URL (secrets included: never shown)
    target_label = models.TextField()  # the URL with its secrets masked
    payload = models.JSONField()
    status = models.CharField(max_length=16, default="pending")  # pending | sent | dropped
    attempts = models.IntegerField(default=0)
    next_attempt_ms = models.BigIntegerField(default=0, db_index=True)
    created_ms = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["alert_id", "notice", "target"], name="alerts_delivery_once")]


class DeliveryAttempt(models.Model):
    """One try at a delivery: the delivery log's row (keyset paged by id)."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="tries")
    at_ms = models.BigIntegerField()
    ok = models.BooleanField()
    status_code = models.IntegerField(null=True)
    detail = models.CharField(max_length=200)


class DeadSighting(models.Model):
    """When the evaluator first saw a record DEAD (``records.dead``, docs/alerts.md §2). A realm's
    first check writes its DEAD records as already known (at 0), so a new rule does not fire on
    the past; a record that is no longer DEAD loses its row, and may turn DEAD again."""

    realm = models.CharField(max_length=512)
    memory_id = models.CharField(max_length=200)  # "" marks a realm already checked once
    first_seen_ms = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["realm", "memory_id"], name="alerts_dead_once")]
