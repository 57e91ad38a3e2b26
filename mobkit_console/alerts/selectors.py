"""What ``/console/alerts/`` shows: each rule with its state and 7-day preview, and the delivery log
(docs/alerts.md §6). The preview replays the timeline through the evaluator's own ``observe``."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from .conditions import EventCondition, condition_for, now_ms
from .config import current_alert_rules
from .evaluator import window_events
from .models import AlertState, DeliveryAttempt
from .definitions import AlertRule
from .durations import moment
from .targets import target_label

PREVIEW_DAYS = 7
LOG_PAGE = 50


@dataclass(frozen=True)
class Preview:
    supported: bool
    firings: int = 0  # episodes that would have opened in the period
    first_ms: int | None = None
    last_ms: int | None = None


@dataclass(frozen=True)
class Firing:
    since: str  # ISO 8601 UTC
    summary: str


@dataclass(frozen=True)
class RuleView:
    rule: AlertRule
    firing: list[Firing]
    preview: Preview
    targets: list[str]


def rule_preview(*, rule: AlertRule, now: int, days: int = PREVIEW_DAYS) -> Preview:
    """How often an event rule would have fired over the last ``days``, by the evaluator's own count.

    The count of a window changes only when an event enters it or leaves it, so the rule is observed
    at each event's time and at each time one leaves; a key firing at one moment and not at the
    one before opens an episode. A state condition reads the present only: no preview.
    """
    condition = condition_for(rule)
    if not isinstance(condition, EventCondition):
        return Preview(supported=False)
    window_ms = condition.window_s(rule) * 1000
    start = now - days * 86_400_000
    events = [event for event in window_events(since_ms=start, until_ms=now) if event.event_type in condition.types]
    moments = sorted({event.timestamp_ms for event in events} | {event.timestamp_ms + window_ms for event in events
                                                                  if event.timestamp_ms + window_ms <= now})
    inside: deque = deque()
    pending = deque(events)
    firing: set[str] = set()
    firings, first, last = 0, None, None
    for at in moments:
        while pending and pending[0].timestamp_ms <= at:
            inside.append(pending.popleft())
        while inside and inside[0].timestamp_ms <= at - window_ms:
            inside.popleft()
        keys = {observation.key for observation in condition.observe(rule, inside)}
        opened = keys - firing
        if opened:
            firings += len(opened)
            first = first if first is not None else at
            last = at
        firing = keys
    return Preview(supported=True, firings=firings, first_ms=first, last_ms=last)


def alert_rules_view(*, now: int | None = None) -> list[RuleView]:
    now = now_ms() if now is None else now
    rules = current_alert_rules().rules
    firing: dict[str, list[Firing]] = {}
    for state in AlertState.objects.filter(firing=True).order_by("since_ms"):
        firing.setdefault(state.rule_id, []).append(Firing(moment(state.since_ms), state.summary))
    return [RuleView(rule=rule, firing=firing.get(rule.id, []), preview=rule_preview(rule=rule, now=now),
                     targets=[target_label(url) for url in rule.notify]) for rule in rules]


@dataclass(frozen=True)
class DeliveryLogPage:
    attempts: list[dict[str, Any]]
    next_cursor: int | None  # the attempt id the next page starts below; None on the last page


def delivery_log(*, before: int | None, limit: int = LOG_PAGE) -> DeliveryLogPage:
    """Attempts, newest first, keyset paged by id (fetch ``limit + 1``)."""
    rows = DeliveryAttempt.objects.select_related("delivery").order_by("-id")
    if before is not None:
        rows = rows.filter(id__lt=before)
    page = list(rows[: limit + 1])
    shown = page[:limit]
    attempts = [{
        "id": row.id, "at": moment(row.at_ms), "ok": row.ok, "status_code": row.status_code, "detail": row.detail,
        "rule_id": row.delivery.rule_id, "notice": row.delivery.notice, "alert_id": row.delivery.alert_id,
        "target": row.delivery.target_label, "delivery_status": row.delivery.status,
    } for row in shown]
    return DeliveryLogPage(attempts, shown[-1].id if len(page) > limit else None)


def firing_alerts(*, conditions: tuple[str, ...]) -> list[Firing]:
    """Open alerts of the rules in force whose condition is among ``conditions`` (the panel banners)."""
    ids = [rule.id for rule in current_alert_rules().rules if rule.when in conditions]
    states = AlertState.objects.filter(rule_id__in=ids, firing=True).order_by("since_ms") if ids else []
    return [Firing(moment(state.since_ms), state.summary) for state in states]
