"""The one evaluator of a deployment (docs/alerts.md §4).

It runs in the process that holds the timeline's watcher lease, after each poll of the realm files
(``realms_followed``): new timeline events drive the event conditions at once, and the state
conditions are checked every ``MOBKIT_ALERTS_CHECK_INTERVAL_S``. One tick is one transaction: the
cursor, each alert's state and the deliveries a transition owes commit together, so a tick cut
short by a crash is repeated whole and a committed one is never repeated.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from mobkit_console.timeline.models import TimelineEvent

from .conditions import EVENT_TYPES, EventRow, Observation, StateCondition, condition_for, now_ms
from .config import current_alert_rules
from .delivery import deliveries_enqueue, deliveries_send_due
from .models import AlertCursor, AlertState
from .notices import notice_payload, observation_lines
from .definitions import AlertRule, AlertRules
from .episodes import KeyState, transitions

logger = logging.getLogger("mobkit_console.alerts")

CURSOR = "evaluator"
EVENT_PAGE = 5000
# Between polls that stored nothing, evaluate at most this often: pushed events are seen within
# about a second, an event alert whose window passed resolves within one, and an idle deployment
# pays a quarter of the ticks its follower's polls would (README "Alerts").
IDLE_TICK_S = 1.0
_last_tick = 0.0


@dataclass(frozen=True)
class TickReport:
    events: int
    opened: int
    resolved: int
    sent: int


def window_events(*, since_ms: int, until_ms: int) -> list[EventRow]:
    """The timeline events any event condition reads, with event times in (since, until]."""
    since = datetime.datetime.fromtimestamp(since_ms / 1000, tz=datetime.UTC)
    rows = (TimelineEvent.objects.filter(event_type__in=EVENT_TYPES, timestamp_ms__gt=since_ms,
                                         timestamp_ms__lte=until_ms, stored_at__gte=since)
            .order_by("timestamp_ms", "seq").values_list("seq", "event_type", "identity", "timestamp_ms", "data"))
    return [EventRow(*row) for row in rows]


def alert_id_for(rule_id: str, key: str, since_ms: int) -> str:
    """Stable for one firing episode: a retried or repeated notice carries the same id."""
    return hashlib.sha256(f"{rule_id}\0{key}\0{since_ms}".encode()).hexdigest()[:24]


def alerts_tick(*, now: int | None = None, check_state: bool | None = None) -> TickReport:
    """Evaluate every rule against what happened since the last tick, then send what is due."""
    now = now_ms() if now is None else now
    rules = current_alert_rules()
    opened = resolved = events = 0
    with transaction.atomic():
        cursor, _ = AlertCursor.objects.select_for_update().get_or_create(name=CURSOR)
        fresh = list(TimelineEvent.objects.filter(seq__gt=cursor.last_seq).order_by("seq")
                     .values_list("seq", "event_type")[:EVENT_PAGE])
        events = sum(1 for _, event_type in fresh if event_type in EVENT_TYPES)
        read_to = cursor.last_seq
        if fresh:
            cursor.last_seq = fresh[-1][0]
        elif cursor.last_seq == 0:
            cursor.last_seq = TimelineEvent.objects.aggregate(top=Max("seq"))["top"] or 0
        due = now - cursor.last_state_check_ms >= settings.MOBKIT_ALERTS_CHECK_INTERVAL_S * 1000
        check_state = due if check_state is None else check_state
        event_rules = [rule for rule in rules.rules if condition_for(rule).kind == "event"]
        resolved = _close_unwatched(rules, now)
        # Every alert's row, read (and locked) once per tick rather than once per rule.
        states: dict[str, dict[str, AlertState]] = {}
        for state in AlertState.objects.select_for_update().filter(rule_id__in=list(rules.by_id)):
            states.setdefault(state.rule_id, {})[state.key] = state
        event_open = any(state.firing for rule in event_rules for state in states.get(rule.id, {}).values())
        if event_rules and (events or event_open or check_state):
            widest = max(condition_for(rule).window_s(rule) for rule in event_rules)
            recent = window_events(since_ms=now - widest * 1000, until_ms=now)
            for rule in event_rules:
                in_window = [event for event in recent if event.timestamp_ms > now - condition_for(rule).window_s(rule) * 1000]
                o, r = _transitions(rule, condition_for(rule).observe(rule, in_window), now, states.get(rule.id, {}))
                opened, resolved = opened + o, resolved + r
        if check_state:
            cursor.last_state_check_ms = now
            for rule in rules.rules:
                condition = condition_for(rule)
                if isinstance(condition, StateCondition):
                    o, r = _transitions(rule, condition.observe_now(rule, now), now, states.get(rule.id, {}))
                    opened, resolved = opened + o, resolved + r
        if check_state or cursor.last_seq != read_to:
            cursor.save()
    sent = deliveries_send_due(now=now)
    return TickReport(events=events, opened=opened, resolved=resolved, sent=sent)


def _key_state(rule: AlertRule, state: AlertState) -> KeyState:
    # A notice sent while the rule watched something else does not hold this one back.
    last = state.last_notified_ms if state.watches in ("", rule.watches) else 0
    return KeyState(state.firing, state.notified, last)


def _transitions(rule: AlertRule, observations: Iterable[Observation], now: int,
                 states: dict[str, AlertState]) -> tuple[int, int]:
    """Open an alert for each key newly firing, resolve each that no longer is; (opened, resolved).

    ``states`` are the rule's rows by key, locked by the tick's transaction."""
    firing = {observation.key: observation for observation in observations}
    for key, observation in firing.items():
        state = states.get(key)
        if state is not None and state.firing and (state.count, state.summary) != (observation.count,
                                                                                   observation.summary):
            state.count, state.summary = observation.count, observation.summary
            state.save(update_fields=["count", "summary"])
    opened = resolved = 0
    changes = transitions(firing=firing, states={key: _key_state(rule, state) for key, state in states.items()},
                          now=now, cooldown_s=rule.cooldown_s)
    for change in changes:
        state = states.get(change.key) or AlertState(rule_id=rule.id, key=change.key)
        if change.opened or not state.watches:  # "": opened before alerts kept these; the rule's are the best known
            state.notify, state.watches = list(rule.notify), rule.watches
        state.firing, state.notified = change.after.firing, change.after.notified
        state.last_notified_ms, state.since_ms = change.after.last_notified_ms, now
        if change.opened:
            observation = firing[change.key]
            state.alert_id = alert_id_for(rule.id, change.key, now)
            state.count, state.summary = observation.count, observation.summary
            if change.notify:
                _owe(state, "firing", observation_lines(rule, observation), now)
            opened += 1
        else:
            if change.notify:
                _owe(state, "resolved", [], now)
            resolved += 1
        state.save()
    return opened, resolved


def _close_unwatched(rules: AlertRules, now: int) -> int:
    """Resolve the open alerts of rules gone from the file, or whose rule now watches something else
    (docs/alerts.md §2): each resolved notice goes to the receivers its alert was opened with."""
    closed = 0
    for state in AlertState.objects.select_for_update().filter(firing=True).order_by("id"):
        rule = rules.by_id.get(state.rule_id)
        if rule is not None and state.watches in ("", rule.watches):
            continue
        state.firing, state.since_ms = False, now
        if state.notified:
            _owe(state, "resolved", [], now)
        state.save()
        closed += 1
    return closed


def _owe(state: AlertState, notice: str, lines: list[str], now: int) -> None:
    summary = state.summary if notice == "firing" else f"cleared: {state.summary}"
    condition = json.loads(state.watches)[0] if state.watches else ""
    payload = notice_payload(rule_id=state.rule_id, condition=condition, alert_id=state.alert_id, notice=notice,
                             key=state.key, since_ms=state.since_ms, count=state.count, summary=summary, lines=lines,
                             now_ms=now)
    deliveries_enqueue(rule_id=state.rule_id, targets=state.notify, alert_id=state.alert_id, notice=notice,
                       payload=payload, now=now)


def alerts_tick_for_leader(*, stored: Sequence[Any] = (), **_: Any) -> None:
    """``realms_followed``'s receiver: the lease holder evaluates, once per poll of the realm files."""
    global _last_tick
    if getattr(settings, "MOBKIT_ALERTS_CONFIG", None) is None:
        return
    if not stored and time.monotonic() - _last_tick < IDLE_TICK_S:
        return
    _last_tick = time.monotonic()
    try:
        alerts_tick()
    except Exception:  # noqa: BLE001 - the follower must go on following; the next poll tries again
        logger.exception("alert evaluation failed; the next poll tries again")
