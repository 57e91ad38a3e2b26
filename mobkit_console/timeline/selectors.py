"""Reading the event log: replay after a cursor, and the newest events for the page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .models import EVENT_ID_PREFIX, TimelineEvent
from .visibility import event_visible

if TYPE_CHECKING:
    from mobkit_console.access.caller import Access

REPLAY_CHUNK = 500
PAGE_LIMIT = 200


def parse_event_id(value: str) -> int | None:
    """``console-evt-<seq>`` → seq; anything else → None."""
    if not value.startswith(EVENT_ID_PREFIX):
        return None
    digits = value[len(EVENT_ID_PREFIX) :]
    return int(digits) if digits.isdigit() and len(digits) <= 18 else None


START_OF_LOG = f"{EVENT_ID_PREFIX}0"


def latest_event_id() -> str | None:
    seq = TimelineEvent.objects.order_by("-seq").values_list("seq", flat=True).first()
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
        if event_visible(access, envelope):
            if len(out) == limit:
                # One more visible event exists: the page is full, and older pages follow it.
                return EventPage(out, older=out[-1]["event_id"])
            out.append(envelope)
    if scanned == PAGE_SCAN_LIMIT and last_seq is not None:
        return EventPage(out, older=f"{EVENT_ID_PREFIX}{last_seq}")
    return EventPage(out, older=None)
