"""Storing events in the log, bounding it, and fanning them out to open sockets."""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from mobkit_console.observability import metrics

from .ingest import IncomingEvent
from .models import EventVisibilityKey, TimelineEvent, key_digest
from .visibility import VisibilityKey, visibility_key

logger = logging.getLogger("mobkit_console.timeline")

TIMELINE_GROUP = "memory-timeline"
EVENTS_MESSAGE_TYPE = "timeline.events"


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
    known = {row.source_event_id: row for row in TimelineEvent.objects.filter(source_event_id__in=source_ids)} \
        if source_ids else {}
    out: list[TimelineEvent] = []
    fresh: list[tuple[TimelineEvent, VisibilityKey]] = []
    for event in events:
        existing = known.get(event.source_event_id) if event.source_event_id is not None else None
        if existing is None:
            existing = TimelineEvent(
                source_event_id=event.source_event_id,
                identity=event.identity,
                event_type=event.event_type,
                timestamp_ms=event.timestamp_ms,
                interaction_id=event.interaction_id,
                data=event.data,
            )
            existing.is_new = True
            fresh.append((existing, visibility_key(event.identity, event.data)))
            if event.source_event_id is not None:
                known[event.source_event_id] = existing  # the same id twice in one batch: one row
        out.append(existing)
    key_ids = visibility_key_ids(key for _, key in fresh)
    for row, key in fresh:
        row.visibility_key_id = key_ids[key]
    # One INSERT for the batch; SQLite (3.35+) and PostgreSQL hand back each row's seq, in order.
    TimelineEvent.objects.bulk_create([row for row, _ in fresh])
    transaction.on_commit(lambda: metrics.timeline_events_ingested.inc(len(fresh)))
    return out


def visibility_key_ids(
    keys: Iterable[VisibilityKey], *, model: type[EventVisibilityKey] = EventVisibilityKey
) -> dict[VisibilityKey, int]:
    """The row id of each key, created if new and marked used now (docs/timeline-live.md §6).

    One upsert: a key the prune is about to drop is either kept (the update moved its
    ``last_used_ms`` past the prune's cutoff) or made again, so a stored event never points at a
    dropped key. Rows go in digest order, so two concurrent stores lock them in the same order.
    ``model`` is the migration's historical model when it backfills the keys of older events.
    """
    wanted = {key_digest(key): key for key in keys}
    if not wanted:
        return {}
    now_ms = int(time.time() * 1000)
    rows = model.objects.bulk_create(
        [model(digest=digest, identity=key[0], scope_kind=key[1], scope_key=key[2], last_used_ms=now_ms)
         for digest, key in sorted(wanted.items())],
        update_conflicts=True, unique_fields=["digest"], update_fields=["last_used_ms"],
    )
    # SQLite and PostgreSQL return the id of an updated row too (RETURNING after ON CONFLICT).
    return {wanted[row.digest]: row.pk for row in rows}


def new_events(rows: Sequence[TimelineEvent]) -> list[TimelineEvent]:
    """The rows ``events_store`` created just now (a deduplicated retry is not announced again: had
    the first publish failed, the fan-outs' sweep of the log sent the events anyway)."""
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
    _prune_visibility_keys()
    return deleted


# A key is dropped only after this long unused, far longer than any store's transaction: a store
# that has just marked it used is never the one to lose it (see visibility_key_ids).
KEY_IDLE_MS = 3_600_000


def _prune_visibility_keys() -> None:
    """Drop the keys no event in the log has any more (docs/timeline-live.md §6), so the count's
    per-key decisions follow the log's size, not its history."""
    idle_before = int(time.time() * 1000) - KEY_IDLE_MS
    in_use = TimelineEvent.objects.filter(visibility_key=OuterRef("pk"))
    EventVisibilityKey.objects.filter(last_used_ms__lt=idle_before).filter(~Exists(in_use)).delete()


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


def live_event(row: TimelineEvent) -> dict[str, Any]:
    """One event as the group message carries it: what a stream filters on, and the envelope
    serialized once for every stream of every process (flat strings, cheap for the layer to copy)."""
    _, scope_kind, scope_key = visibility_key(row.identity, row.data)
    return {
        "seq": row.seq,
        "identity": row.identity,
        "event_type": row.event_type,
        "scope_kind": scope_kind,
        "scope_key": scope_key,
        "envelope": envelope_json(row.envelope()),
    }


# A publish that has not gone out by then is given up on: the fan-outs' sweep sends the events from
# the log about as soon (fanout.LAYER_GRACE_S), so waiting longer would only hold up the push.
PUBLISH_TIMEOUT_S = 1.0
# One warning per this long while publishing fails (Redis down), not one per push.
PUBLISH_WARN_EVERY_S = 10.0
_publish_failures = 0
_publish_warned_at = float("-inf")


async def events_broadcast(rows: Sequence[TimelineEvent]) -> None:
    """Hand stored events to every server process in one group message (docs/timeline-live.md §4).

    Each process's fan-out (fanout.py) receives it once and serves its own streams, so this costs
    one layer send whatever the number of open sockets: ingest answers without waiting on them.
    The events are stored already, so a publish that fails (Redis down) is not the caller's error:
    every fan-out sweeps the log and sends what the layer did not bring (docs/timeline-live.md §4).
    """
    global _publish_failures, _publish_warned_at
    layer = get_channel_layer()
    if layer is None or not rows:
        return
    message = {"type": EVENTS_MESSAGE_TYPE, "events": [live_event(row) for row in rows]}
    try:
        # asyncio.timeout, not wait_for: Python 3.11's wait_for swallows a cancellation that meets a
        # publish just done, and asgiref hands the cancellation of a task waiting on a watcher's
        # poll on to this coroutine: the task would go on as if never cancelled.
        async with asyncio.timeout(PUBLISH_TIMEOUT_S):
            await layer.group_send(TIMELINE_GROUP, message)
    except Exception as error:  # noqa: BLE001 - any layer failure: the sweep delivers from the log
        _publish_failures += 1
        now = time.monotonic()
        if now - _publish_warned_at >= PUBLISH_WARN_EVERY_S:
            logger.warning("timeline: %d publish(es) to the channel layer failed (latest: %r); the events are"
                           " stored and each server's fan-out sends them from the log", _publish_failures, error)
            _publish_failures, _publish_warned_at = 0, now


def events_broadcast_sync(rows: Sequence[TimelineEvent]) -> None:
    if rows:
        async_to_sync(events_broadcast)(rows)
