"""What a rule's ``when`` can name, and how each one is observed (docs/alerts.md §2).

Two kinds. An *event* condition counts the timeline events it matches over the rule's window, per
key (a realm, or a realm and an identity): the same count decides the live evaluation and the 7-day
preview, so the preview is what the evaluator would have done. A *state* condition reads the
present (a queue, a verdict tile, a replica copy, a realm file) and is checked periodically; those
whose past the realm's history file keeps (the quarantine queue, the store floor) are read at past
moments too and judged by the same threshold, for the preview; the others say why they cannot be
(docs/alerts.md §6.1). Observations carry ids and counts only; titles are added later, bounded by
the rule's subject.
"""

from __future__ import annotations

import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, NamedTuple

from django.db import DatabaseError

from access.caller import Access
from memory_panel.errors import PanelError
from memory_panel.selectors.quarantine import quarantine_backlog
from memory_panel.selectors.replicas import replica_health
from memory_panel.selectors.tiles import LABELS, TILE_IDS, fact_record_ids, verdict_tiles
from memory_panel.store.realms import connect_readonly, realm_names, realm_path

from .durations import duration_s, span
from .sightings import dead_sightings

if TYPE_CHECKING:
    from .definitions import AlertRule
    from .past import RealmPast

RecordRef = tuple[str, str]  # (realm, memory id)
REFS_MAX = 5
SYSTEM_IDENTITY = "_system"  # docs/timeline.md §3.1
# The evaluator itself reads everything; what a notification may say is bounded afterwards (§4).
EVALUATOR_ACCESS = Access(subject=None, groups=frozenset(), enforced=False, is_admin=True)


class EventRow(NamedTuple):
    """The part of a timeline event a condition reads."""

    seq: int
    event_type: str
    identity: str
    timestamp_ms: int
    data: dict[str, Any]


@dataclass(frozen=True)
class Observation:
    """One key of a rule found firing: what crossed the threshold, with ids and counts only."""

    key: str
    realm: str | None
    count: int
    summary: str
    refs: tuple[RecordRef, ...] = ()


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


class Condition:
    name = ""
    kind = "state"  # event | state
    threshold_required = False
    default_threshold: float | None = None

    def threshold_of(self, raw: Any) -> float | None:
        if raw is None:
            if self.threshold_required:
                raise ValueError(f"{self.name} needs a threshold")
            return self.default_threshold
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw < 1:
            raise ValueError(f"threshold must be a number of at least 1, not {raw!r}")
        return float(raw)

    def check(self, rule: AlertRule) -> None:
        """ValueError when an option of the rule does not fit this condition."""
        for option in ("tile", "identity"):
            if getattr(rule, option) is not None and option not in self.options:
                raise ValueError(f"{option} does not apply to {self.name}")
        if rule.tainted_only and "tainted_only" not in self.options:
            raise ValueError(f"tainted_only does not apply to {self.name}")

    def no_preview(self, rule: AlertRule) -> str | None:
        """Why the 7-day preview cannot replay this rule; None when it can (docs/alerts.md §6.1)."""
        return None

    options: frozenset[str] = frozenset()


# ---- event conditions --------------------------------------------------------------------------


class EventCondition(Condition):
    kind = "event"
    types: frozenset[str] = frozenset()
    default_window_s = 900
    noun = "event"

    def window_s(self, rule: AlertRule) -> int:
        return rule.window_s or self.default_window_s

    def key_of(self, rule: AlertRule, event: EventRow) -> str | None:
        """The key this event counts toward, or None when the rule does not count it."""
        realm = event.data.get("realm")
        return realm if isinstance(realm, str) and rule.covers(realm) else None

    def observe(self, rule: AlertRule, events: Iterable[EventRow]) -> list[Observation]:
        """The keys whose matching events among ``events`` (one window's) reach the threshold."""
        counted: dict[str, list[EventRow]] = defaultdict(list)
        for event in events:
            if event.event_type in self.types and (key := self.key_of(rule, event)) is not None:
                counted[key].append(event)
        threshold = rule.threshold or 1
        out = []
        for key, matched in sorted(counted.items()):
            if len(matched) >= threshold:
                realm = matched[0].data.get("realm")
                refs = tuple(dict.fromkeys((realm, event.data["record_id"]) for event in matched
                                           if isinstance(event.data.get("record_id"), str)))[-REFS_MAX:]
                summary = f"{_plural(len(matched), self.noun)} in {span(self.window_s(rule))} ({key})"
                out.append(Observation(key, realm, len(matched), summary, refs))
        return out


class QuarantineArrived(EventCondition):
    name = "quarantine.arrived"
    types = frozenset({"memory.write.quarantined"})
    default_threshold = 1.0
    noun = "quarantined write"
    options = frozenset({"identity", "tainted_only"})

    def key_of(self, rule: AlertRule, event: EventRow) -> str | None:
        data = event.data
        if rule.identity is not None and rule.identity not in (event.identity, data.get("scope_key")):
            return None
        # docs/store-format.md §6: the gate's reason says when the writing session was tainted.
        if rule.tainted_only and "taint" not in str(data.get("reason", "")).lower():
            return None
        return super().key_of(rule, event)


class WritesBurst(EventCondition):
    name = "writes.burst"
    types = frozenset({"memory.record.remembered", "memory.record.updated", "memory.record.forgotten",
                       "memory.write.quarantined"})
    threshold_required = True
    default_window_s = 60
    noun = "write"

    def key_of(self, rule: AlertRule, event: EventRow) -> str | None:
        realm = super().key_of(rule, event)
        identity = event.identity
        if identity == SYSTEM_IDENTITY and event.data.get("scope_kind") == "identity":
            identity = event.data.get("scope_key") or identity
        if realm is None or identity == SYSTEM_IDENTITY:
            return None
        return f"{realm} {identity}"


# ---- state conditions --------------------------------------------------------------------------


class StateCondition(Condition):
    # Why the 7-day preview cannot replay this condition; None where the history file tells its past.
    unknown_past: str | None = "its past is not kept"

    def observe_now(self, rule: AlertRule, now_ms: int) -> list[Observation]:
        raise NotImplementedError

    def no_preview(self, rule: AlertRule) -> str | None:
        return self.unknown_past

    @staticmethod
    def realms(rule: AlertRule) -> list[str]:
        return [name for name in realm_names() if rule.covers(name)]


class ReplayedState(StateCondition):
    """A state the realm's history file can tell at any past moment (docs/history.md §3.1): read now
    by the evaluator, at past moments by the preview, and judged against the threshold by the same
    ``judged`` either way."""

    unknown_past = None

    def reading_now(self, rule: AlertRule, realm: str) -> Any:
        raise NotImplementedError

    def judged(self, rule: AlertRule, realm: str, reading: Any, at_ms: int) -> Observation | None:
        raise NotImplementedError

    def replay_points(self, rule: AlertRule, past: RealmPast) -> Iterable[int]:
        """Every moment of the week at which this state could have changed."""
        raise NotImplementedError

    def readings_past(self, rule: AlertRule, past: RealmPast, moments: list[int]) -> Iterator[tuple[int, Any]]:
        raise NotImplementedError

    def observe_now(self, rule: AlertRule, now_ms: int) -> list[Observation]:
        out = []
        for realm in self.realms(rule):
            observation = self.judged(rule, realm, _readable(lambda: self.reading_now(rule, realm), None), now_ms)
            if observation is not None:
                out.append(observation)
        return out


class QueueLength(ReplayedState):
    name = "quarantine.queue.length"
    threshold_required = True

    def reading_now(self, rule: AlertRule, realm: str) -> int:
        return quarantine_backlog(realm).records

    def judged(self, rule: AlertRule, realm: str, reading: int | None, at_ms: int) -> Observation | None:
        if reading is None or reading < (rule.threshold or 1):
            return None
        return Observation(realm, realm, reading, f"{_plural(reading, 'record')} waiting in quarantine ({realm})")

    def replay_points(self, rule: AlertRule, past: RealmPast) -> Iterable[int]:
        return chain.from_iterable((begun, to or begun) for begun, to in past.quarantined)

    def readings_past(self, rule: AlertRule, past: RealmPast, moments: list[int]) -> Iterator[tuple[int, int]]:
        return ((at, waiting) for at, waiting, _ in past.queue(moments))


class QueueOldest(QueueLength):
    name = "quarantine.queue.oldest"

    def threshold_of(self, raw: Any) -> float | None:
        if raw is None:
            raise ValueError(f"{self.name} needs a threshold (a duration such as \"2h\")")
        return float(duration_s(raw, name="threshold"))

    def reading_now(self, rule: AlertRule, realm: str) -> int | None:
        return quarantine_backlog(realm).oldest_created_at_ms

    def judged(self, rule: AlertRule, realm: str, reading: int | None, at_ms: int) -> Observation | None:
        if reading is None or at_ms - reading < (rule.threshold or 0) * 1000:
            return None
        waited = (at_ms - reading) // 1000
        return Observation(realm, realm, waited,
                           f"the oldest quarantined record has waited {span(max(waited, 1))} ({realm})")

    def replay_points(self, rule: AlertRule, past: RealmPast) -> Iterable[int]:
        # Besides each arrival and departure, the moment each record would reach the threshold.
        reached = (begun + int((rule.threshold or 0) * 1000) for begun, _ in past.quarantined)
        return chain(super().replay_points(rule, past), reached)

    def readings_past(self, rule: AlertRule, past: RealmPast, moments: list[int]) -> Iterator[tuple[int, int | None]]:
        return ((at, oldest) for at, _, oldest in past.queue(moments))


# docs/panel-tiles.md: what each tile reads that the history file does not keep (docs/history.md §3).
_TILE_PASTS = {
    "echo-safety": "ECHO-SAFETY reads the injection ledger, whose past the history file does not keep",
    "taint-wall": "TAINT WALL reads session taint and proposals, whose past the history file does not keep",
    "lattice": "LATTICE reads each record's trust, which the audit rows do not carry",
    "recall": "RECALL reads usage counters, which change without an audit row",
    "dreams": "DREAMS reads dream runs, whose past the history file does not keep",
    "store-floor": None,
}


class TileViolated(ReplayedState):
    name = "tile.violated"
    options = frozenset({"tile"})
    tile_id: str | None = None

    def check(self, rule: AlertRule) -> None:
        super().check(rule)
        if self.tile_id is None and rule.tile not in TILE_IDS:
            raise ValueError(f"tile must be one of {', '.join(TILE_IDS)}, not {rule.tile!r}")

    def no_preview(self, rule: AlertRule) -> str | None:
        return _TILE_PASTS[self.tile_id or rule.tile]

    def reading_now(self, rule: AlertRule, realm: str) -> tuple[int, tuple[RecordRef, ...]] | None:
        """How many records (scopes, for STORE FLOOR) are at issue and the first few records; None
        while the rule's tile is not violated."""
        tile_id = self.tile_id or rule.tile
        tile = next((tile for tile in verdict_tiles(access=EVALUATOR_ACCESS, realm=realm) if tile.id == tile_id), None)
        if tile is None or tile.state != "violated":
            return None
        refs = tuple((item.realm, item.memory_id) for item in tile.evidence[:REFS_MAX])
        return (len(tile.scopes) if tile_id == "store-floor" else tile.evidence_total), refs

    def judged(self, rule: AlertRule, realm: str, reading: tuple[int, tuple[RecordRef, ...]] | None,
               at_ms: int) -> Observation | None:
        if reading is None:
            return None
        tile_id = self.tile_id or rule.tile
        at_issue, refs = reading
        noun = "scope" if tile_id == "store-floor" else "record"
        return Observation(realm, realm, at_issue,
                           f"{LABELS[tile_id]} is violated: {_plural(at_issue, noun)} at issue ({realm})", refs)

    def replay_points(self, rule: AlertRule, past: RealmPast) -> Iterable[int]:
        return past.change_moments

    def readings_past(self, rule: AlertRule, past: RealmPast,
                      moments: list[int]) -> Iterator[tuple[int, tuple[int, tuple[RecordRef, ...]] | None]]:
        """STORE FLOOR's own test (docs/panel-tiles.md §7) on each scope's holdings at each moment."""
        for at in moments:
            at_floor = sum(1 for scope in past.scopes_at(at) if scope.floor_pressure)
            yield at, ((at_floor, ()) if at_floor else None)


class ScopeFloor(TileViolated):
    """docs/panel-tiles.md: STORE FLOOR is violated while a scope is at its floor."""

    name = "scope.floor"
    options = frozenset()
    tile_id = "store-floor"


class RecordsDead(StateCondition):
    """docs/panel-tabs.md §3: DEAD is injected three times or more and never judged useful."""

    name = "records.dead"
    threshold_required = True
    unknown_past = "turning DEAD depends on injections and usage, whose past the history file does not keep"
    default_window_s = 3600

    def observe_now(self, rule: AlertRule, now_ms: int) -> list[Observation]:
        window_s = rule.window_s or self.default_window_s
        out = []
        for realm in self.realms(rule):
            dead = _readable(lambda: fact_record_ids(realm=realm, fact="recall.dead"), None)
            if dead is None:
                continue
            turned = dead_sightings(realm=realm, dead=dead, now_ms=now_ms, since_ms=now_ms - window_s * 1000)
            if len(turned) >= (rule.threshold or 1):
                refs = tuple((realm, memory_id) for memory_id in turned[-REFS_MAX:])
                out.append(Observation(realm, realm, len(turned),
                                       f"{_plural(len(turned), 'record')} turned DEAD in {span(window_s)} ({realm})", refs))
        return out


class ReplicaStale(StateCondition):
    name = "replica.stale"
    unknown_past = "a replica copy's lag is read from the copy as it is now; its past is not kept"

    def observe_now(self, rule: AlertRule, now_ms: int) -> list[Observation]:
        health = replica_health()
        out = [Observation(lag.realm, lag.realm, 1, f"replica copy {lag.realm}: {lag.problem}")
               for lag in health.lags if lag.stale and rule.covers(lag.realm)]
        if not rule.realms:
            out += [Observation(f"source {source.label}", None, 1, f"replica source {source.label}: {source.problem}")
                    for source in health.sources]
        return out


class RealmUnreadable(StateCondition):
    name = "realm.unreadable"
    unknown_past = "whether a realm file could be read is not kept over time"

    def observe_now(self, rule: AlertRule, now_ms: int) -> list[Observation]:
        out = []
        for realm in self.realms(rule):
            try:
                connection = connect_readonly(realm_path(realm))
                try:
                    connection.execute("SELECT COUNT(*) FROM records WHERE 0").fetchone()
                finally:
                    connection.close()
            except (sqlite3.Error, OSError) as error:
                out.append(Observation(realm, realm, 1, f"realm {realm} cannot be read: {type(error).__name__}"))
        return out


def _readable(read: Any, fallback: Any) -> Any:
    """A realm that cannot be read is ``realm.unreadable``'s business, not every rule's failure."""
    try:
        return read()
    except (PanelError, DatabaseError, sqlite3.Error, OSError):
        return fallback


_ALL: Sequence[Condition] = (
    QuarantineArrived(), QueueLength(), QueueOldest(), TileViolated(), WritesBurst(), RecordsDead(),
    ReplicaStale(), RealmUnreadable(), ScopeFloor(),
)
CONDITIONS: dict[str, Condition] = {condition.name: condition for condition in _ALL}
EVENT_TYPES = frozenset().union(*(c.types for c in _ALL if isinstance(c, EventCondition)))


def condition_for(rule: AlertRule) -> Condition:
    return CONDITIONS[rule.when]


def now_ms() -> int:
    return time.time_ns() // 1_000_000
