"""A realm's last week as its history file keeps it (docs/history.md §3.1), read once for every state
rule of the alerts page that can be replayed (docs/alerts.md §6.1): the quarantined spans the week
saw, the moments anything changed, and each scope's holdings at a moment. Statuses, scopes and
sizes only: nothing here carries a record's text."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property
from itertools import islice

from memory_panel.selectors.as_of import scope_holdings_of
from memory_panel.selectors.holdings import ScopeHoldings
from memory_panel.store.history_file import History

# The evaluator checks state every MOBKIT_ALERTS_CHECK_INTERVAL_S; a busy week is replayed on a
# coarser grid rather than at every change, so one rule's preview stays within this many checks.
MOMENTS_MAX = 2016  # one every 5 minutes over 7 days


class RealmPast:
    """What one realm's history file says of the moments after ``start`` up to ``now``."""

    def __init__(self, history: History, *, start: int, now: int) -> None:
        self.history = history
        self.realm = history.realm
        self.start = start
        self.now = now
        self._scopes: dict[int, list[ScopeHoldings]] = {}  # by moment: rules of one page share the moments

    @cached_property
    def _week(self) -> tuple[list[tuple[int, int | None]], list[int]]:
        """The quarantined spans standing at ``start`` or begun since (from, to), in ``from`` order,
        and every moment a change happened in the week."""
        waiting = sum(group.records for group in self.history.groups_at(self.start) if group.status == "quarantined")
        # Newest first: the groups' count says when the oldest one still waiting has been read.
        standing = list(islice(self.history.standing_at(self.start, status="quarantined"), waiting))
        spans = [(span.from_ms, span.to_ms) for span in reversed(standing)]
        moments = set()
        for span in self.history.changes_between(self.start, self.now):
            moments.add(span.from_ms)
            if span.status == "quarantined":
                spans.append((span.from_ms, span.to_ms))
        return spans, sorted(moments)

    @property
    def quarantined(self) -> list[tuple[int, int | None]]:
        return self._week[0]

    @property
    def change_moments(self) -> list[int]:
        return self._week[1]

    def queue(self, moments: Iterable[int]) -> Iterator[tuple[int, int, int | None]]:
        """At each of ``moments`` (ascending): how many records waited in quarantine, and since when
        the oldest of them had (None: none waited)."""
        spans = self.quarantined
        ends = sorted(to for _, to in spans if to is not None)
        added = ended = front = 0
        for at in moments:
            while added < len(spans) and spans[added][0] <= at:
                added += 1
            while ended < len(ends) and ends[ended] <= at:
                ended += 1
            while front < added and spans[front][1] is not None and spans[front][1] <= at:
                front += 1
            oldest = next((begun for begun, to in spans[front:added] if to is None or to > at), None)
            yield at, added - ended, oldest

    def scopes_at(self, at_ms: int) -> list[ScopeHoldings]:
        if at_ms not in self._scopes:
            self._scopes[at_ms] = scope_holdings_of(self.realm, self.history.groups_at(at_ms))
        return self._scopes[at_ms]


def replay_moments(points: Iterable[int], *, start: int, now: int, step_ms: int) -> list[int]:
    """The moments to replay: each point a state could have changed at, moved on to the evaluator's
    next check (``step_ms``; 0: the point itself), on a grid coarse enough for ``MOMENTS_MAX``."""
    points = sorted({point for point in points if start < point <= now})
    step = step_ms
    while True:
        moments = sorted({min(-(-point // step) * step, now) if step else point for point in points})
        if len(moments) <= MOMENTS_MAX:
            return moments
        step = max(step * 2, 1000)
