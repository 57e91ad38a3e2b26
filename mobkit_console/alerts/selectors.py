"""What ``/console/alerts/`` shows: each rule with its state and 7-day preview, and the delivery log
(docs/alerts.md §6). The preview replays the timeline (event rules) or the realms' history files
(state rules whose past they keep) through the evaluator's own observation and transitions."""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.conf import settings

from memory_panel.errors import PanelError
from memory_panel.store.history_file import realm_history

from .conditions import EventCondition, EventRow, Observation, ReplayedState, condition_for, now_ms
from .config import current_alert_rules
from .evaluator import window_events
from .models import AlertState, DeliveryAttempt
from .definitions import AlertRule
from .durations import moment
from .episodes import KeyState, transitions
from .past import RealmPast, replay_moments
from .targets import target_label

PREVIEW_DAYS = 7
PREVIEW_SHOWN = 10  # the page names the first few times a rule would have fired; the count is whole
LOG_PAGE = 50


@dataclass(frozen=True)
class WouldFire:
    at_ms: int
    summary: str  # the evaluator's own: ids and counts only
    notified: bool  # False: opened within the cooldown of the key's last notice, so nothing sent

    @property
    def at(self) -> str:
        return moment(self.at_ms)


@dataclass(frozen=True)
class Preview:
    """How often a rule would have fired over the last week; ``unknown`` says why it cannot be told."""

    episodes: tuple[WouldFire, ...] = ()
    unknown: str | None = None
    gaps: tuple[str, ...] = ()  # realms left out, each with why

    @property
    def supported(self) -> bool:
        return self.unknown is None

    @property
    def firings(self) -> int:
        return len(self.episodes)

    @property
    def shown(self) -> tuple[WouldFire, ...]:
        return self.episodes[:PREVIEW_SHOWN]


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


class _Week:
    """The week a page's previews replay, read once for every rule: the timeline's events and each
    realm's history file (closed with the page)."""

    def __init__(self, stack: ExitStack, *, start: int, now: int) -> None:
        self.stack, self.start, self.now = stack, start, now
        self.realms: dict[str, RealmPast] = {}

    @cached_property
    def events(self) -> list[EventRow]:
        return window_events(since_ms=self.start, until_ms=self.now)

    def realm(self, realm: str) -> RealmPast:
        if realm not in self.realms:
            history = self.stack.enter_context(realm_history(realm))
            self.realms[realm] = RealmPast(history, start=self.start, now=self.now)
        return self.realms[realm]


def _replayed(rule: AlertRule, moments: Iterable[tuple[int, dict[str, Observation]]],
              states: dict[str, KeyState]) -> list[WouldFire]:
    """Each moment's firing keys through the evaluator's own transitions: the episodes they open."""
    out = []
    for at, firing in moments:
        for change in transitions(firing=firing, states=states, now=at, cooldown_s=rule.cooldown_s):
            states[change.key] = change.after
            if change.opened:
                out.append(WouldFire(at, firing[change.key].summary, change.notify))
    return out


def _event_preview(rule: AlertRule, condition: EventCondition, week: _Week) -> Preview:
    """The count of a window changes only when an event enters it or leaves it, so the rule is
    observed at each event's time and at each time one leaves."""
    window_ms = condition.window_s(rule) * 1000
    events = [event for event in week.events if event.event_type in condition.types]
    moments = sorted({event.timestamp_ms for event in events} | {event.timestamp_ms + window_ms for event in events
                                                                  if event.timestamp_ms + window_ms <= week.now})
    inside: deque = deque()
    pending = deque(events)

    def observed() -> Iterator[tuple[int, dict[str, Observation]]]:
        for at in moments:
            while pending and pending[0].timestamp_ms <= at:
                inside.append(pending.popleft())
            while inside and inside[0].timestamp_ms <= at - window_ms:
                inside.popleft()
            yield at, {observation.key: observation for observation in condition.observe(rule, inside)}

    return Preview(episodes=tuple(_replayed(rule, observed(), {})))


def _state_preview(rule: AlertRule, condition: ReplayedState, week: _Week) -> Preview:
    """The state at each moment it could have changed, as the realm's history file tells it, judged
    as the evaluator judges the present. A realm's keys are its own, so realms replay one by one; a
    key already firing as the week began opens nothing until it has resolved."""
    episodes: list[WouldFire] = []
    gaps: list[str] = []
    step_ms = int(settings.MOBKIT_ALERTS_CHECK_INTERVAL_S * 1000)
    for realm in condition.realms(rule):
        try:
            past = week.realm(realm)
            moments = replay_moments(condition.replay_points(rule, past), start=week.start, now=week.now,
                                     step_ms=step_ms)
            readings = condition.readings_past(rule, past, [week.start, *moments])
            observed = [(at, {o.key: o for o in [condition.judged(rule, realm, reading, at)] if o is not None})
                        for at, reading in readings]
        except (PanelError, sqlite3.Error, OSError) as error:
            gaps.append(f"{realm}: {getattr(error, 'message', type(error).__name__)}")
            continue
        began = {key: KeyState(firing=True, notified=True) for key in observed[0][1]}
        episodes += _replayed(rule, observed[1:], began)
    return Preview(episodes=tuple(sorted(episodes, key=lambda episode: episode.at_ms)), gaps=tuple(gaps))


def rule_preview(*, rule: AlertRule, now: int, days: int = PREVIEW_DAYS, week: _Week | None = None) -> Preview:
    """How often ``rule`` would have fired over the last ``days``, by the evaluator's own count and
    cooldown (docs/alerts.md §6.1); for a state whose past is not kept, why there is no preview."""
    condition = condition_for(rule)
    if not isinstance(condition, (EventCondition, ReplayedState)) or condition.no_preview(rule) is not None:
        return Preview(unknown=condition.no_preview(rule))
    if week is None:
        with ExitStack() as stack:
            return rule_preview(rule=rule, now=now, week=_Week(stack, start=now - days * 86_400_000, now=now))
    if isinstance(condition, EventCondition):
        return _event_preview(rule, condition, week)
    return _state_preview(rule, condition, week)


def alert_rules_view(*, now: int | None = None) -> list[RuleView]:
    now = now_ms() if now is None else now
    rules = current_alert_rules().rules
    firing: dict[str, list[Firing]] = {}
    for state in AlertState.objects.filter(firing=True).order_by("since_ms"):
        firing.setdefault(state.rule_id, []).append(Firing(moment(state.since_ms), state.summary))
    with ExitStack() as stack:
        week = _Week(stack, start=now - PREVIEW_DAYS * 86_400_000, now=now)
        return [RuleView(rule=rule, firing=firing.get(rule.id, []), preview=rule_preview(rule=rule, now=now, week=week),
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
