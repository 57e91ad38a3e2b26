"""Charts: daily series from each realm's daily counts, summed over what the caller may list
(docs/charts.md §3).

Every count is kept per scope (and injections per identity too), so a caller's series sums only
the scopes it may read, and leaves out reviewer-only events (quarantined arrivals, tombstones of
quarantine evidence) unless it reviews (`docs/access.md` §2.8). Days are the realm's own: a window
ends on the newest day the realm's feeds name (docs/panel-tiles.md §1, the realm's clock).
"""

from __future__ import annotations

import datetime
import statistics
from collections import defaultdict
from collections.abc import Callable
from contextlib import closing
from functools import partial
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory_panel.errors import InvalidParams
from memory_panel.store import daily_counts
from memory_panel.store.realm_memo import KEPT_ROWS, realm_memo
from memory_panel.store.rows import panel_realms, realm_read
from memory_panel.visibility import (
    can_read_realm_history,
    can_review_quarantine,
    identity_visible,
    scope_checker,
    sees_quarantined,
)
from memory_panel.wire.params import FLOOR_BYTES

if TYPE_CHECKING:
    from access.caller import Access

# The windows a chart may span, in days (docs/charts.md §1).
WINDOWS = (30, 90)
SPARK_DAYS = 30
# Bytes against the floor: the scopes nearest it, one line each.
FLOOR_SCOPES = 5


@dataclass(frozen=True)
class Series:
    key: str  # names its colour in the stylesheet (``chart-series--<key>``)
    label: str
    values: list[int | None]  # None: nothing to measure that day (a wait on a day without verdicts)


@dataclass(frozen=True)
class Chart:
    """One chart: a value per day per series, drawn as stacked ``bars`` or ``lines``."""

    id: str
    title: str
    shape: str
    days: list[datetime.date]
    series: list[Series]
    unit: str = ""
    note: str = ""
    threshold: int | None = None  # a level drawn across the chart (the floor)
    threshold_label: str = ""

    @property
    def empty(self) -> bool:
        return not any(any(v for v in s.values if v is not None) for s in self.series)

    @property
    def rows(self) -> list[tuple[datetime.date, list[int | None]]]:
        """The table beside the chart: one row per day, newest first."""
        return [(day, [s.values[i] for s in self.series]) for i, day in reversed(list(enumerate(self.days)))]


@dataclass
class _Window:
    first_day: int
    days: int

    def dates(self) -> list[datetime.date]:
        return [datetime.date.fromordinal(_EPOCH + self.first_day + i) for i in range(self.days)]

    def zeros(self) -> list[int]:
        return [0] * self.days

    def at(self, day: int) -> int | None:
        offset = day - self.first_day
        return offset if 0 <= offset < self.days else None


_EPOCH = datetime.date(1970, 1, 1).toordinal()


def parse_window(raw: str | None) -> int:
    """``?days=`` of a page with charts: 30 (default) or 90."""
    if raw in (None, ""):
        return WINDOWS[0]
    if raw.isdigit() and int(raw) in WINDOWS:
        return int(raw)
    raise InvalidParams(f"days must be one of {', '.join(map(str, WINDOWS))}")


@dataclass(frozen=True)
class _Daily:
    """One realm's daily counts (docs/charts.md §2), every table read whole: they are small, a row
    per day and scope, and so the same answer serves every caller and window."""

    newest: int | None  # the realm's clock: its newest counted day
    scopes: dict[int, tuple[str, str]]
    records: list[tuple]  # day, scope, event, reviewer_only, records, body_chars
    waits: list[tuple]  # day, scope, wait_ms
    injections: list[tuple]  # day, surface, identity, scope, injections
    usage: list[tuple]  # day, scope, event, records
    dream_runs: list[tuple]  # day, runs
    dream_ops: list[tuple]  # day, op_kind, ops

    @property
    def rows(self) -> int:
        return sum(map(len, (self.records, self.waits, self.injections, self.usage, self.dream_runs, self.dream_ops)))


# A realm whose counts are more rows than ``KEPT_ROWS``: read afresh at each ask rather than kept.
_TOO_MANY = object()


def _daily(name: str) -> _Daily | None:
    """The realm's counts, kept while its file stands still (and its backlog is counted), so a page
    over 500 quiet realms opens none of their daily files; None while the realm has none."""
    kept = realm_memo(name, ("daily",), partial(_kept_daily, name))
    return _read_daily(name) if kept is None or kept is _TOO_MANY else kept


def _kept_daily(name: str) -> _Daily | object | None:
    daily = _read_daily(name)
    if daily is None or daily_counts.counting(name):
        return None  # no counts, or a partial count: nothing to keep
    return daily if daily.rows <= KEPT_ROWS else _TOO_MANY


def _read_daily(name: str) -> _Daily | None:
    conn = daily_counts.counts_connection(name)
    if conn is None:
        return None
    with closing(conn):
        rows = lambda sql: conn.execute(sql).fetchall()  # noqa: E731
        return _Daily(
            daily_counts.realm_clock_day(conn), daily_counts.scope_names(conn),
            rows("SELECT day, scope, event, reviewer_only, records, body_chars FROM record_days"),
            rows("SELECT day, scope, wait_ms FROM verdict_waits"),
            rows("SELECT day, surface, identity, scope, injections FROM injection_days"),
            rows("SELECT day, scope, event, records FROM usage_days"),
            rows("SELECT day, COUNT(*) FROM dream_run_days GROUP BY day"),
            rows("SELECT day, op_kind, ops FROM dream_op_days"),
        )


@dataclass
class _Realms:
    """The daily counts of every realm a page spans, and the realms still being counted."""

    counts: list[tuple[str, _Daily]] = field(default_factory=list)
    counting: list[str] = field(default_factory=list)

    def window(self, days: int) -> _Window:
        last = max((daily.newest for _, daily in self.counts if daily.newest is not None), default=_today())
        return _Window(last - days + 1, days)


def _today() -> int:
    return datetime.date.today().toordinal() - _EPOCH


def _realms(realm: str | None, names: list[str] | None = None) -> _Realms:
    found = _Realms()
    for name in panel_realms(realm) if names is None else names:
        with realm_read(name, alone=realm is not None):
            daily = _daily(name)
            if daily is not None:
                found.counts.append((name, daily))
                if daily_counts.counting(name):
                    found.counting.append(name)
    return found


def _readable(daily: _Daily, may_read: Callable[[str, str], bool]) -> dict[int, tuple[str, str]]:
    return {number: scope for number, scope in daily.scopes.items() if may_read(*scope)}


@dataclass(frozen=True)
class ChartSet:
    charts: list[Chart]
    days: int
    counting: list[str]  # realms whose backlog is still being counted: their charts are partial
    sparklines: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Holdings: records by status, bytes against the floor, one sparkline per scope


def holdings_charts(*, access: Access, realm: str | None, days: int) -> ChartSet:
    may_read, with_quarantined = scope_checker(access), sees_quarantined(access)
    realms = _realms(realm)
    window = realms.window(days)
    flows = {event: window.zeros() for event in ("created", "quarantined", "superseded", "tombstoned")}
    bytes_by_scope: dict[tuple[str, str, str], list[int]] = {}
    sparks: dict[tuple[str, str, str], list[int]] = {}
    spark_window = _Window(window.first_day + window.days - SPARK_DAYS, SPARK_DAYS)
    for name, counts in realms.counts:
        readable = _readable(counts, may_read)
        before: dict[int, int] = defaultdict(int)
        daily: dict[int, list[int]] = {}
        earlier, within = _record_history(counts, window.first_day)
        for scope, event, reviewer_only, _, chars in earlier:
            if scope in readable and (with_quarantined or not reviewer_only) and event in _NEW:
                before[scope] += chars
        for day, scope, event, reviewer_only, records, chars in within:
            if scope not in readable or (reviewer_only and not with_quarantined):
                continue
            offset = window.at(day)
            if offset is None:
                continue
            if event in _NEW:
                daily.setdefault(scope, window.zeros())[offset] += chars
            flows["tombstoned" if event in ("released", "rejected") else event][offset] += records
            spark_at = spark_window.at(day)
            if spark_at is not None:
                sparks.setdefault((name, *readable[scope]), spark_window.zeros())[spark_at] += records
        for scope in set(before) | set(daily):
            bytes_by_scope[(name, *readable[scope])] = _running(before[scope], daily.get(scope, window.zeros()))
    labels = {"created": "Created", "quarantined": "Quarantined", "superseded": "Superseded", "tombstoned": "Tombstoned"}
    shown = [e for e in flows if e != "quarantined" or with_quarantined]
    status = Chart(
        "records-by-status", "Records by status, per day", "bars", window.dates(),
        [Series(e, labels[e], flows[e]) for e in shown], unit="records",
        note="" if with_quarantined else "Quarantined records and retired quarantine evidence are counted for reviewers only.",
    )
    nearest = sorted(bytes_by_scope.items(), key=lambda item: (-item[1][-1], item[0]))[:FLOOR_SCOPES]
    floor = Chart(
        "bytes-against-floor", "Bytes of bodies against the floor", "lines", window.dates(),
        [Series(f"s{i}", _scope_label(key, realm is None), values) for i, (key, values) in enumerate(nearest)],
        unit="bytes", threshold=FLOOR_BYTES, threshold_label="floor: 32 MiB per scope",
        note=f"The {FLOOR_SCOPES} largest scopes you may read, as each stood at the end of each day.",
    )
    return ChartSet([status, floor], days, realms.counting, sparks)


# The events that add a record (and its body) to the realm.
_NEW = ("created", "quarantined")


def _record_history(daily: _Daily, first_day: int) -> tuple[list[tuple], list[tuple]]:
    """The record events before the window summed per scope, event and reviewer-only (what a level
    starts from), and the window's own rows."""
    sums: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    within = []
    for row in daily.records:
        day, scope, event, reviewer_only, records, chars = row
        if day < first_day:
            total = sums[(scope, event, reviewer_only)]
            total[0] += records
            total[1] += chars
        else:
            within.append(row)
    return [(*key, records, chars) for key, (records, chars) in sums.items()], within


def _running(start: int, steps: list[int]) -> list[int]:
    levels, level = [], start
    for step in steps:
        level += step
        levels.append(level)
    return levels


def _scope_label(key: tuple[str, str, str], with_realm: bool) -> str:
    name, kind, scope_key = key
    scope = f"{kind}:{scope_key}" if scope_key and not scope_key.startswith(f"{kind}:") else (scope_key or kind)
    return f"{name} · {scope}" if with_realm else scope


# ---------------------------------------------------------------------------------------------
# Quarantine: arrivals, verdicts, queue depth, waits


def quarantine_charts(*, access: Access, realm: str | None, days: int) -> ChartSet | None:
    """None for a caller who does not review: the quarantine page's charts are a reviewer's."""
    if not can_review_quarantine(access):
        return None
    may_read = scope_checker(access)
    realms = _realms(realm)
    window = realms.window(days)
    arrived, released, rejected, depth_steps = window.zeros(), window.zeros(), window.zeros(), window.zeros()
    depth_before = 0
    waits: dict[int, list[int]] = defaultdict(list)
    for _, counts in realms.counts:
        readable = _readable(counts, may_read)
        earlier, within = _record_history(counts, window.first_day)
        for scope, event, _, records, _ in earlier:
            if scope in readable and event in _QUEUE:
                depth_before += records if event == "quarantined" else -records
        for day, scope, event, _, records, _ in within:
            if scope not in readable or event not in _QUEUE or (offset := window.at(day)) is None:
                continue
            depth_steps[offset] += records if event == "quarantined" else -records
            {"quarantined": arrived, "released": released, "rejected": rejected}[event][offset] += records
        for day, scope, wait_ms in counts.waits:
            offset = window.at(day)
            if scope in readable and offset is not None:
                waits[offset].append(wait_ms)
    every_wait = sorted(w for day_waits in waits.values() for w in day_waits)
    hours = lambda ms: round(ms / 3_600_000)  # noqa: E731
    median = [hours(statistics.median(waits[i])) if waits.get(i) else None for i in range(window.days)]
    worst = [hours(max(waits[i])) if waits.get(i) else None for i in range(window.days)]
    summary = (
        f"Over these {days} days: {len(every_wait)} verdicts; median wait {_duration(statistics.median(every_wait))},"
        f" worst {_duration(every_wait[-1])}." if every_wait else f"No verdicts in these {days} days."
    )
    return ChartSet(
        [
            Chart("quarantine-flow", "Arrivals and verdicts, per day", "bars", window.dates(),
                  [Series("quarantined", "Arrived", arrived), Series("released", "Released", released),
                   Series("rejected", "Tombstoned", rejected)], unit="records"),
            Chart("queue-depth", "Queue depth at the end of each day", "lines", window.dates(),
                  [Series("quarantined", "Waiting", _running(depth_before, depth_steps))], unit="records"),
            Chart("verdict-wait", "Wait for a verdict, by the day it was given", "lines", window.dates(),
                  [Series("median", "Median", median), Series("worst", "Worst", worst)], unit="hours", note=summary),
        ],
        days, realms.counting,
    )


# The events that move the quarantine queue: an arrival, and the two verdicts.
_QUEUE = ("quarantined", "released", "rejected")


def _duration(ms: float) -> str:
    hours = ms / 3_600_000
    return f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.1f} hours"


# ---------------------------------------------------------------------------------------------
# Injections: per day by surface; records never injected and DEAD, over time


def injection_charts(*, access: Access, realm: str | None, days: int) -> ChartSet:
    may_read, with_quarantined = scope_checker(access), sees_quarantined(access)
    realms = _realms(realm)
    window = realms.window(days)
    surfaces: dict[str, list[int]] = {}
    never_before, never_steps = 0, window.zeros()
    dead_before, dead_steps = 0, window.zeros()
    for _, counts in realms.counts:
        readable = _readable(counts, may_read)
        for day, surface, identity, scope, count in counts.injections:
            offset = window.at(day)
            # docs/access.md §2.8: an injection is the identity's activity and names its record.
            if offset is None or not identity_visible(access, identity) or (scope and scope not in readable):
                continue
            surfaces.setdefault(surface, window.zeros())[offset] += count
        earlier, within = _record_history(counts, window.first_day)
        for scope, event, reviewer_only, records, _ in earlier:
            if scope in readable and event in _NEW and (with_quarantined or not reviewer_only):
                never_before += records
        for day, scope, event, reviewer_only, records, _ in within:
            offset = window.at(day)
            if offset is not None and scope in readable and event in _NEW and (with_quarantined or not reviewer_only):
                never_steps[offset] += records
        for day, scope, event, records in counts.usage:
            if scope not in readable:
                continue
            if day < window.first_day:
                never_before, dead_before = _usage(event, records, never_before, dead_before)
            elif (offset := window.at(day)) is not None:
                never_steps[offset], dead_steps[offset] = _usage(event, records, never_steps[offset], dead_steps[offset])
    return ChartSet(
        [
            Chart("injections-by-surface", "Injections per day, by surface", "bars", window.dates(),
                  [Series(f"surface-{s}", s, v) for s, v in sorted(surfaces.items())], unit="injections"),
            Chart("never-injected", "Records never injected, and DEAD", "lines", window.dates(),
                  [Series("never", "Never injected", _running(never_before, never_steps)),
                   Series("dead", "DEAD", _running(dead_before, dead_steps))], unit="records",
                  note="DEAD: injected 3 times and never judged useful when the third injection was counted."),
        ],
        days, realms.counting,
    )


def _usage(event: str, records: int, never: int, dead: int) -> tuple[int, int]:
    """(never injected, DEAD) moved by a usage event: a first injection ends "never injected"."""
    return (never - records, dead) if event == "first_injected" else (never, dead + records)


# ---------------------------------------------------------------------------------------------
# Dreams: runs per day and their ops by kind


def dream_charts(*, access: Access, realm: str | None, days: int) -> ChartSet | None:
    """None without an unscoped read: run counts are realm-wide, as the Dreams page is
    (docs/access.md §2.8: a run's counts carry no content and stay whole)."""
    if not can_read_realm_history(access):
        return None
    realms = _realms(realm)
    window = realms.window(days)
    runs, ops = window.zeros(), {}
    for _, counts in realms.counts:
        for day, count in counts.dream_runs:
            if (offset := window.at(day)) is not None:
                runs[offset] += count
        for day, kind, count in counts.dream_ops:
            if (offset := window.at(day)) is not None:
                ops.setdefault(kind, window.zeros())[offset] += count
    return ChartSet(
        [
            Chart("dream-runs", "Dream runs per day", "bars", window.dates(), [Series("runs", "Runs", runs)], unit="runs"),
            Chart("dream-ops", "Dream ops per day, by kind", "bars", window.dates(),
                  [Series(f"op-{k}", k.replace("_", " "), v) for k, v in sorted(ops.items())],
                  unit="ops"),
        ],
        days, realms.counting,
    )


# ---------------------------------------------------------------------------------------------
# The realm list: one sparkline per realm


def realm_sparklines(*, access: Access, names: list[str]) -> dict[str, list[int]]:
    """Records created per day over the last 30 days of each realm, of the scopes the caller may
    read (quarantined arrivals for reviewers only)."""
    may_read, with_quarantined = scope_checker(access), sees_quarantined(access)
    lines: dict[str, list[int]] = {}
    for name, counts in _realms(None, names).counts:
        if counts.newest is None:
            continue
        window = _Window(counts.newest - SPARK_DAYS + 1, SPARK_DAYS)
        readable = _readable(counts, may_read)
        line = window.zeros()
        for day, scope, event, _, records, _ in counts.records:
            offset = window.at(day)
            if offset is not None and scope in readable and (event == "created" or (event == "quarantined" and with_quarantined)):
                line[offset] += records
        lines[name] = line
    return lines
