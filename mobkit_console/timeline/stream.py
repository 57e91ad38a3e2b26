"""One caller's live view of the event log, shared by the two sockets and the SSE stream.

A subscription knows its caller (re-reading the grants every second), its filters and how far the
replay went; it decides for each stored or live event whether this caller receives it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

from channels.db import database_sync_to_async

from access.caller import Access, Caller, access_for

from .events import EVENT_TYPES
from .selectors import EventFilter, events_after, latest_event_id, parse_event_id, replay_start
from .visibility import VisibilityKey, envelope_visible, key_visible

# Re-read the caller's grants this often, so an access.toml edit reaches open streams well within
# the contract's 5 s (the config file itself is re-checked about once a second).
ACCESS_REFRESH_S = 1.0


class ReplayUnavailable(Exception):
    """The log no longer holds (or never held) the event a client asked to resume after."""

    def __init__(self, requested: str, latest: str | None) -> None:
        super().__init__(requested)
        self.requested = requested
        self.latest = latest


def stream_filter(query: Any) -> EventFilter:
    """``?event_type=`` and ``?identity=`` from a QueryDict or a parse_qs dict; unknown types ignored."""
    def first(name: str) -> str:
        value = query.get(name) or ""
        return (value[0] if isinstance(value, list) else value).strip()

    event_type = first("event_type")
    return EventFilter(event_type=event_type if event_type in EVENT_TYPES else None,
                       identity=first("identity") or None)


class Subscription:
    def __init__(self, caller: Caller, filters: EventFilter) -> None:
        self.caller = caller
        self.filters = filters
        self._access = access_for(caller)
        self._access_at = time.monotonic()
        # Decisions of key_visible under self._access, by visibility key: a stream carries few
        # distinct keys, and evaluating the rules per frame was per-stream work.
        # Dropped whenever the Access is re-read, so a revocation still lands within a second.
        self._visible: dict[VisibilityKey, bool] = {}
        # Live events at or below this were sent by the replay. Nothing else is skipped: two
        # processes may store 11 and 10 and send them in that order, and both must arrive.
        self.replayed_upto = 0

    def access(self) -> Access:
        now = time.monotonic()
        if now - self._access_at >= ACCESS_REFRESH_S:
            self._access = access_for(self.caller)
            self._access_at = now
            self._visible.clear()
        return self._access

    @property
    def audience(self) -> tuple[Caller, EventFilter]:
        """Streams of one caller (groups and all) and filters receive the same events (fanout.py decides once)."""
        return (self.caller, self.filters)

    def receives(self, event: dict[str, Any]) -> bool:
        """Does this caller receive a live event (services.live_event), replay aside?"""
        if not self.filters.matches(event_type=event["event_type"], identity=event["identity"]):
            return False
        key = (event["identity"], event["scope_kind"], event["scope_key"])
        access = self.access()
        visible = self._visible.get(key)
        if visible is None:
            visible = self._visible[key] = key_visible(access, key)
        return visible

    async def replay(self, after: str) -> AsyncIterator[list[dict[str, Any]]]:
        """Every stored envelope after ``after`` this caller may see, in order, a chunk of the log at a
        time (so what is done per caller, naming records, is done once a chunk, not once an event).

        Raises ReplayUnavailable before yielding anything when the log does not hold ``after``.
        """
        start = await database_sync_to_async(replay_start)(after=after)
        if start is None:
            raise ReplayUnavailable(after, await database_sync_to_async(latest_event_id)())
        self.replayed_upto = start
        while True:
            chunk = await database_sync_to_async(events_after)(after_seq=self.replayed_upto)
            if not chunk:
                return
            self.replayed_upto = parse_event_id(chunk[-1]["event_id"]) or self.replayed_upto
            access = self.access()
            mine = [envelope for envelope in chunk
                    if self.filters.matches(event_type=envelope["event_type"], identity=envelope["identity"])
                    and envelope_visible(access, envelope)]
            if mine:
                yield mine
