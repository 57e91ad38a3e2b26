"""Reading the event log: replay after a cursor, and the newest events for the page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_panel.selectors.counts import COUNT_CAP, Count

from .models import EVENT_ID_PREFIX, EventVisibilityKey, TimelineEvent
from .visibility import envelope_visible, key_visible

if TYPE_CHECKING:
    from access.caller import Access

REPLAY_CHUNK = 500
PAGE_LIMIT = 200


def parse_event_id(value: str) -> int | None:
    """``console-evt-<seq>`` → seq; anything else → None."""
    if not value.startswith(EVENT_ID_PREFIX):
        return None
    digits = value[len(EVENT_ID_PREFIX) :]
    return int(digits) if digits.isdigit() and len(digits) <= 18 else None


START_OF_LOG = f"{EVENT_ID_PREFIX}0"


def latest_seq() -> int | None:
    return TimelineEvent.objects.order_by("-seq").values_list("seq", flat=True).first()


def latest_event_id() -> str | None:
    seq = latest_seq()
    return None if seq is None else f"{EVENT_ID_PREFIX}{seq}"


def replay_start(*, after: str) -> int | None:
    """The seq to replay after, or None when the log does not hold ``after`` (pruned, or never was).

    ``console-evt-0`` means "from the start of the log": a page rendered over an empty log
    connects with it, so nothing stored before its socket opens is lost.
    """
    seq = parse_event_id(after)
    if seq == 0:
        return 0
    if seq is None or not TimelineEvent.objects.filter(seq=seq).exists():
        return None
    return seq


@dataclass(frozen=True)
class EventFilter:
    event_type: str | None = None
    identity: str | None = None

    def matches(self, *, event_type: str, identity: str) -> bool:
        return (self.event_type is None or event_type == self.event_type) and (
            self.identity is None or identity == self.identity
        )


def events_after(*, after_seq: int, limit: int = REPLAY_CHUNK) -> list[dict[str, Any]]:
    """The next ``limit`` stored envelopes after ``after_seq``, in order, unfiltered."""
    rows = TimelineEvent.objects.filter(seq__gt=after_seq).order_by("seq")[:limit]
    return [row.envelope() for row in rows]


def event_seqs_after(*, after_seq: int, limit: int) -> list[int]:
    """The seqs of the first ``limit`` stored events after ``after_seq``, in order (fanout.py's sweep)."""
    return list(TimelineEvent.objects.filter(seq__gt=after_seq).order_by("seq").values_list("seq", flat=True)[:limit])


def events_by_seq(*, seqs: list[int]) -> list[TimelineEvent]:
    """The stored events among ``seqs``, in order (a pruned one is left out)."""
    return list(TimelineEvent.objects.filter(seq__in=seqs).order_by("seq"))


@dataclass(frozen=True)
class EventPage:
    events: list[dict[str, Any]]  # newest first
    older: str | None  # the ``before`` cursor of the next older page; None at the log's first event


# Visibility is per event, so one page scans at most this many rows; a page that runs out of
# window before it fills still offers "older", resuming where the scan stopped.
PAGE_SCAN_LIMIT = PAGE_LIMIT * 10


def events_page(*, access: Access, filters: EventFilter, before: int | None = None,
                limit: int = PAGE_LIMIT) -> EventPage:
    """The newest ``limit`` events the caller may see (below seq ``before`` when given), newest first.

    Keyset over the log's seq, as the records list pages by its ordering key: the cursor is a seq,
    never an offset, so a page costs the same at any depth and new events do not shift it.
    """
    queryset = TimelineEvent.objects.order_by("-seq")
    if before is not None:
        queryset = queryset.filter(seq__lt=before)
    if filters.event_type:
        queryset = queryset.filter(event_type=filters.event_type)
    if filters.identity:
        queryset = queryset.filter(identity=filters.identity)
    out: list[dict[str, Any]] = []
    scanned = 0
    last_seq: int | None = None
    for row in queryset[:PAGE_SCAN_LIMIT].iterator(chunk_size=REPLAY_CHUNK):
        scanned += 1
        last_seq = row.seq
        envelope = row.envelope()
        if envelope_visible(access, envelope):
            if len(out) == limit:
                # One more visible event exists: the page is full, and older pages follow it.
                return EventPage(out, older=out[-1]["event_id"])
            out.append(envelope)
    if scanned == PAGE_SCAN_LIMIT and last_seq is not None:
        return EventPage(out, older=f"{EVENT_ID_PREFIX}{last_seq}")
    return EventPage(out, older=None)


# Visible keys asked about per count query: a bound on the statement's parameters, far above the
# keys a log usually holds (one per identity and scope that wrote).
COUNT_KEY_CHUNK = 500


def events_count(*, access: Access, filters: EventFilter, before: int | None = None, upto: int | None = None,
                 cap: int = COUNT_CAP) -> Count:
    """How many events the caller may see match ``filters`` (below seq ``before``, up to seq ``upto``), capped.

    docs/timeline-live.md §6: exactly the events ``events_page`` would show on a walk to the first
    event. Visibility is decided once per visibility key, never per event; each visible key's
    events are counted through the (key, type, seq) index and the count stops at ``cap + 1``, so it
    costs the keys plus at most the cap, whatever the log holds.
    """
    keys = EventVisibilityKey.objects.order_by("id")
    if filters.identity:
        keys = keys.filter(identity=filters.identity)
    visible = [pk for pk, *key in keys.values_list("id", "identity", "scope_kind", "scope_key")
               if key_visible(access, tuple(key))]
    events = TimelineEvent.objects.order_by()  # a count needs no order: the index's own is the cheapest
    if filters.event_type:
        events = events.filter(event_type=filters.event_type)
    if before is not None:
        events = events.filter(seq__lt=before)
    if upto is not None:
        events = events.filter(seq__lte=upto)
    total = 0
    for start in range(0, len(visible), COUNT_KEY_CHUNK):
        chunk = visible[start : start + COUNT_KEY_CHUNK]
        total += events.filter(visibility_key_id__in=chunk)[: cap + 1 - total].count()
        if total > cap:
            break
    return Count(total, cap)


@dataclass(frozen=True)
class PageCount:
    """The count shown beside a page of events, and which of them the page shows."""

    count: Count
    first: int | None  # the position of the page's first row; None when the count was capped before it
    shown: int

    @property
    def last(self) -> int | None:
        return None if self.first is None else self.first + self.shown - 1


def events_page_count(*, access: Access, filters: EventFilter, before: int | None, newest_seq: int | None,
                      shown: int) -> PageCount | None:
    """The count beside a page of ``shown`` events (docs/timeline-live.md §6), or None when it
    could not be right.

    The newest page counts up to its frontier ``newest_seq``: the socket replays what follows, and
    the page adds those to the count as they arrive. An older page counts every event and places
    itself by how many lie below ``before``. A count short of the rows shown (events stored without
    a key during an upgrade) is no count at all.
    """
    if before is None:
        counted = PageCount(events_count(access=access, filters=filters, upto=newest_seq), 1, shown)
    else:
        total = events_count(access=access, filters=filters)
        if total.capped:
            return PageCount(total, None, shown)
        below = events_count(access=access, filters=filters, before=before)
        counted = PageCount(total, total.value - below.value + 1, shown)
    if not counted.count.capped and (counted.first < 1 or (counted.last or 0) > counted.count.value):
        return None
    return counted
