"""Storing events in the log, bounding it, and fanning them out to open sockets."""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Sequence
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from .ingest import IncomingEvent
from .models import TimelineEvent
from .visibility import visibility_key

TIMELINE_GROUP = "memory-timeline"
EVENT_MESSAGE_TYPE = "timeline.event"


def events_store(*, events: Sequence[IncomingEvent]) -> list[TimelineEvent]:
    """Store ``events`` in order, in one transaction; a known source id returns the stored row.

    Returns one row per input (so a retried push learns the ids it was given the first time).
    Call inside ``transaction.atomic()`` to commit other state (a watermark) with the events.
    """
    try:
        with transaction.atomic():
            return _store(events)
    except IntegrityError:
        # A concurrent retry stored the same source id between our lookup and insert: look again.
        with transaction.atomic():
            return _store(events)


def _store(events: Sequence[IncomingEvent]) -> list[TimelineEvent]:
    source_ids = [e.source_event_id for e in events if e.source_event_id is not None]
    known = {row.source_event_id: row for row in TimelineEvent.objects.filter(source_event_id__in=source_ids)}
    out: list[TimelineEvent] = []
    for event in events:
        existing = known.get(event.source_event_id) if event.source_event_id is not None else None
        if existing is None:
            existing = TimelineEvent.objects.create(
                source_event_id=event.source_event_id,
                identity=event.identity,
                event_type=event.event_type,
                timestamp_ms=event.timestamp_ms,
                interaction_id=event.interaction_id,
                data=event.data,
            )
            existing.is_new = True
            if event.source_event_id is not None:
                known[event.source_event_id] = existing  # the same id twice in one batch: one row
        out.append(existing)
    return out


def new_events(rows: Sequence[TimelineEvent]) -> list[TimelineEvent]:
    """The rows ``events_store`` created just now (a deduplicated retry is not announced again)."""
    seen: set[int] = set()
    fresh = []
    for row in rows:
        if getattr(row, "is_new", False) and row.seq not in seen:
            seen.add(row.seq)
            fresh.append(row)
    return fresh


def events_prune() -> int:
    """Drop events beyond the configured count and age (the log must not grow without end)."""
    deleted = 0
    max_age_days = settings.MOBKIT_TIMELINE_MAX_AGE_DAYS
    if max_age_days > 0:
        cutoff = timezone.now() - datetime.timedelta(days=max_age_days)
        deleted += TimelineEvent.objects.filter(stored_at__lt=cutoff).delete()[0]
    max_events = settings.MOBKIT_TIMELINE_MAX_EVENTS
    latest = TimelineEvent.objects.order_by("-seq").values_list("seq", flat=True).first()
    if max_events > 0 and latest is not None:
        # Sequence numbers are dense (gaps only from rolled-back inserts), so this keeps about
        # max_events rows with one indexed range delete.
        deleted += TimelineEvent.objects.filter(seq__lte=latest - max_events).delete()[0]
    return deleted


_PRUNE_EVERY_S = 5.0
_last_prune = 0.0


def events_prune_due() -> int:
    """Prune at most every few seconds: the bounds are loose, and a prune per push costs throughput."""
    global _last_prune
    now = time.monotonic()
    if now - _last_prune < _PRUNE_EVERY_S:
        return 0
    _last_prune = now
    return events_prune()


def envelope_json(envelope: dict[str, Any]) -> str:
    return json.dumps(envelope, separators=(",", ":"))


def event_message(row: TimelineEvent) -> dict[str, Any]:
    """The group message for one event: flat strings, so the layer copies it cheaply per socket.

    It carries what a socket filters on and the envelope serialized once, instead of the
    envelope every socket would copy and re-serialize (the benchmark's hot path).
    """
    _, scope_kind, scope_key = visibility_key(row.identity, row.data)
    return {
        "type": EVENT_MESSAGE_TYPE,
        "seq": row.seq,
        "identity": row.identity,
        "event_type": row.event_type,
        "scope_kind": scope_kind,
        "scope_key": scope_key,
        "envelope": envelope_json(row.envelope()),
    }


async def events_broadcast(rows: Sequence[TimelineEvent]) -> None:
    """Hand stored events to every server process's open sockets; each socket filters."""
    layer = get_channel_layer()
    if layer is None:
        return
    for row in rows:
        await layer.group_send(TIMELINE_GROUP, event_message(row))


def events_broadcast_sync(rows: Sequence[TimelineEvent]) -> None:
    if rows:
        async_to_sync(events_broadcast)(rows)
