"""The console's event log and the realm watcher's bookkeeping (docs/timeline.md).

Both live in the console's own database, never in a realm file.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import models

from .visibility import VisibilityKey

EVENT_ID_PREFIX = "console-evt-"


def key_digest(key: VisibilityKey) -> str:
    """A fixed-width unique name for a visibility key: its parts are untrusted data of any length,
    too long for a unique index on PostgreSQL, and a NULL scope would never collide in one."""
    return hashlib.sha256(json.dumps(list(key), ensure_ascii=False).encode("utf-8")).hexdigest()


class EventVisibilityKey(models.Model):
    """One distinct visibility key of the log's events (docs/timeline-live.md §6).

    Every event with this key is received by the same callers, so the timeline's count decides
    each key once and counts its events through the index on ``TimelineEvent.visibility_key``.
    ``last_used_ms`` moves on every store that uses the key; a key no event uses any more is
    dropped by the prune once it has been idle a while.
    """

    digest = models.CharField(max_length=64, unique=True)
    identity = models.TextField()
    scope_kind = models.TextField(null=True)
    scope_key = models.TextField(null=True)
    last_used_ms = models.BigIntegerField()

    @property
    def key(self) -> VisibilityKey:
        return self.identity, self.scope_kind, self.scope_key


class TimelineEvent(models.Model):
    """One stored event; its primary key is the console's own sequence number.

    ``source_event_id`` is the id the sender chose (or the watcher's deterministic key): a retried
    push carrying the same id finds the stored row instead of making a second one.
    """

    seq = models.BigAutoField(primary_key=True)
    source_event_id = models.CharField(max_length=200, null=True, blank=True, unique=True)
    identity = models.CharField(max_length=256, db_index=True)
    event_type = models.CharField(max_length=64, db_index=True)
    timestamp_ms = models.BigIntegerField()
    interaction_id = models.CharField(max_length=200, null=True, blank=True)
    data = models.JSONField(default=dict)
    stored_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # No database constraint: a key is dropped only once no event has used it for a while, and an
    # event is never refused over its key. NULL only for an event stored by a console older than
    # the key (during an upgrade); the count leaves such an event out rather than guess.
    visibility_key = models.ForeignKey(
        EventVisibilityKey, null=True, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False,
        related_name="+",
    )

    class Meta:
        ordering = ["seq"]
        # docs/timeline-live.md §6: the count seeks each visible key's events (by type, below a seq).
        indexes = [
            models.Index(fields=["visibility_key", "seq"], name="timeline_event_key_seq"),
            models.Index(fields=["visibility_key", "event_type", "seq"], name="timeline_event_key_type_seq"),
        ]

    @property
    def event_id(self) -> str:
        return f"{EVENT_ID_PREFIX}{self.seq}"

    def envelope(self) -> dict[str, Any]:
        """MobKit's console identity envelope (docs/timeline.md §3.1): interaction_id omitted when absent."""
        out: dict[str, Any] = {"event_id": self.event_id}
        if self.interaction_id:
            out["interaction_id"] = self.interaction_id
        out.update(
            identity=self.identity,
            event_type=self.event_type,
            timestamp_ms=self.timestamp_ms,
            data=self.data,
        )
        return out


class RealmWatermark(models.Model):
    """How far the watcher has read one realm file; saved in the same transaction as its events.

    ``generation`` counts how often the realm file was found replaced (its audit ids went back),
    so the watcher's deterministic source ids stay unique across a re-seeded file.
    """

    realm = models.CharField(max_length=512, primary_key=True)
    generation = models.IntegerField(default=0)
    last_audit_id = models.BigIntegerField(default=0)
    last_promotion_rowid = models.BigIntegerField(default=0)
    last_dream_rowid = models.BigIntegerField(default=0)
    # Steward run ids already announced with memory.dream.started, newest last, bounded.
    started_runs = models.JSONField(default=list)
    # docs/history.md §1: False until the realm's history (the last ``backfill_days`` days, else
    # MOBKIT_TIMELINE_BACKFILL_DAYS) is on the timeline; a row from before backfills existed is False,
    # so an upgraded console puts the history it skipped there once.
    backfilled = models.BooleanField(default=False)
    backfill_days = models.IntegerField(null=True)
    updated_at = models.DateTimeField(auto_now=True)


class WatcherLease(models.Model):
    """A lease row that makes ``watch_realms`` a singleton across processes and hosts.

    Taken and renewed with one conditional UPDATE, which both SQLite and PostgreSQL run atomically.
    """

    name = models.CharField(max_length=64, primary_key=True)
    holder = models.CharField(max_length=200, default="")
    expires_at_ms = models.BigIntegerField(default=0)
