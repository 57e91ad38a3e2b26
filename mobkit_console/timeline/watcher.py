"""The realm watcher: turns what the MobKit runtime commits to each realm file into timeline events.

A realm file's signature says when something was committed (``memory_panel/store/changes.py``); then new
``audit`` rows (by audit_id), new ``pending_promotions`` and new ``dream_runs`` (by rowid) are read
in one snapshot and mapped as the README's "Timeline" section lists. The events and the realm's
high-water mark are committed to the console database in one transaction, so a restarted watcher
resumes with no gap and no repeat; the deterministic ``source_event_id`` of each event is a second
guard against repeats. ``watch_realms`` runs it behind a lease so a deployment has exactly one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from memory_panel.store.changes import ChangeWatch
from memory_panel.store.realms import connect_readonly, realm_names, realm_path
from memory_panel.wire.rust_debug import author_debug

from .events import SYSTEM_IDENTITY
from .ingest import IncomingEvent
from .models import RealmWatermark, TimelineEvent, WatcherLease
from .services import events_broadcast_sync, events_prune_due, events_store, new_events

logger = logging.getLogger("mobkit_console.timeline")

AUDIT_PAGE = 5000  # larger than a batch (at most 1024 ops, docs/store-format.md §8), so a page ends on a batch
STARTED_RUNS_KEPT = 256
LEASE_NAME = "realm-watcher"
RECORD_EVENT = {"create": "memory.record.remembered", "supersede": "memory.record.updated",
                "tombstone": "memory.record.forgotten"}


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# ---- the lease ---------------------------------------------------------------------------------


def lease_acquire(*, holder: str, ttl_ms: int) -> bool:
    """Take or renew the watcher lease; False while another holder's lease is unexpired."""
    WatcherLease.objects.get_or_create(name=LEASE_NAME)
    now = now_ms()
    taken = (
        WatcherLease.objects.filter(name=LEASE_NAME)
        .filter(Q(holder=holder) | Q(expires_at_ms__lt=now))
        .update(holder=holder, expires_at_ms=now + ttl_ms)
    )
    return taken == 1


def lease_release(*, holder: str) -> None:
    WatcherLease.objects.filter(name=LEASE_NAME, holder=holder).update(holder="", expires_at_ms=0)


def lease_holder() -> tuple[str, int] | None:
    row = WatcherLease.objects.filter(name=LEASE_NAME).values_list("holder", "expires_at_ms").first()
    return row if row and row[0] else None


# ---- reading one realm -------------------------------------------------------------------------


@dataclass
class _Mark:
    """An in-memory copy of a RealmWatermark row, advanced as rows are read."""

    generation: int = 0
    last_audit_id: int = 0
    last_promotion_rowid: int = 0
    last_dream_rowid: int = 0
    started_runs: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, row: RealmWatermark) -> _Mark:
        return cls(row.generation, row.last_audit_id, row.last_promotion_rowid, row.last_dream_rowid,
                   list(row.started_runs))


@dataclass
class _Pending:
    pending_id: str
    record_id: str
    scope_kind: str
    scope_key: str


class _RealmReader:
    """Reads one realm file through a fresh read-only connection per read, closed after it: no
    realm is held open between polls, so 500 realms cost no file descriptors, and a replica copy
    is never held open while its Litestream follower waits to apply (docs/replicas.md §4)."""

    def __init__(self, realm: str) -> None:
        self.realm = realm
        self.path = realm_path(realm)
        self.inode = self.path.stat().st_ino
        self.conn: sqlite3.Connection | None = None
        self.changes = ChangeWatch()
        self.more = False  # the last read stopped at AUDIT_PAGE: read again without a new commit
        with self.session() as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        self.has_dream_runs = "dream_runs" in tables

    @contextmanager
    def session(self) -> Iterator[sqlite3.Connection]:
        """``self.conn`` for the length of one read."""
        self.conn = connect_readonly(self.path)
        try:
            yield self.conn
        finally:
            self.conn.close()
            self.conn = None

    def replaced(self) -> bool:
        try:
            return self.path.stat().st_ino != self.inode
        except FileNotFoundError:
            return True

    def changed(self) -> bool:
        """True when a commit landed since the last call (and on the first call): the file's
        signature moved (``memory_panel/store/changes.py``), or the last read stopped short."""
        return self.changes.changed(self.path) or self.more

    def frontier(self, mark: _Mark) -> _Mark:
        """``mark`` moved to the file's current end, for a realm the watcher should not backfill."""
        with self.session() as conn:
            return self._frontier(conn, mark)

    def window(self, mark: _Mark, *, since_ms: int) -> _Mark:
        """``mark`` moved to just before the first row committed at or after ``since_ms`` (the end of
        the file when none was), so a read from it puts the realm's history since then on the
        timeline (docs/history.md §1). A batch shares one ``applied_at_ms``, so no batch is cut."""
        read_up_to = mark.last_audit_id
        with self.session() as conn:
            self._frontier(conn, mark)
            if mark.last_audit_id < read_up_to:
                # Replaced since it was last read: the old file's source ids must not hide the new one's.
                mark.generation += 1
            first = conn.execute("SELECT MIN(audit_id) FROM audit WHERE applied_at_ms >= ?", (since_ms,)).fetchone()[0]
            if first is not None:
                mark.last_audit_id = first - 1
            first = conn.execute("SELECT MIN(rowid) FROM pending_promotions WHERE created_at_ms >= ?",
                                 (since_ms,)).fetchone()[0]
            if first is not None:
                mark.last_promotion_rowid = first - 1
            if self.has_dream_runs:
                first = conn.execute("SELECT MIN(rowid) FROM dream_runs WHERE completed_at_ms >= ?",
                                     (since_ms,)).fetchone()[0]
                if first is not None:
                    mark.last_dream_rowid = first - 1
        mark.started_runs = []
        return mark

    def _frontier(self, conn: sqlite3.Connection, mark: _Mark) -> _Mark:
        mark.last_audit_id = conn.execute("SELECT COALESCE(MAX(audit_id), 0) FROM audit").fetchone()[0]
        mark.last_promotion_rowid = conn.execute(
            "SELECT COALESCE(MAX(rowid), 0) FROM pending_promotions").fetchone()[0]
        if self.has_dream_runs:
            mark.last_dream_rowid = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM dream_runs").fetchone()[0]
        return mark

    def read(self, mark: _Mark) -> tuple[list[IncomingEvent], _Mark]:
        """Events for everything committed after ``mark``, and the advanced mark; one read snapshot."""
        with self.session():
            return self._read(mark)

    def _read(self, mark: _Mark) -> tuple[list[IncomingEvent], _Mark]:
        self.conn.execute("BEGIN")
        try:
            max_audit = self.conn.execute("SELECT COALESCE(MAX(audit_id), 0) FROM audit").fetchone()[0]
            if max_audit < mark.last_audit_id:
                # The file was re-created (audit ids never go back in a live store): start over.
                logger.info("realm %s was replaced; reading it from the beginning", self.realm)
                mark = _Mark(generation=mark.generation + 1)
            out = self._audit_events(mark)
            out += self._promotion_events(mark)
            if self.has_dream_runs:
                out += self._dream_events(mark)
        finally:
            self.conn.execute("COMMIT")
        # One timeline order across the three tables: by time, the read order breaking ties.
        out.sort(key=lambda event: event.timestamp_ms)
        return out, mark

    def _event(self, mark: _Mark, key: str, event_type: str, timestamp_ms: int, data: dict[str, Any],
               identity: str = SYSTEM_IDENTITY) -> IncomingEvent:
        realm_tag = hashlib.sha256(self.realm.encode("utf-8")).hexdigest()[:16]
        return IncomingEvent(
            source_event_id=f"watch:{realm_tag}:{mark.generation}:{key}",
            identity=identity,
            event_type=event_type,
            timestamp_ms=timestamp_ms,
            data={"realm": self.realm, **data},
            interaction_id=None,
        )

    # -- audit rows ----------------------------------------------------------------------------

    def _audit_events(self, mark: _Mark) -> list[IncomingEvent]:
        rows = self.conn.execute(
            "SELECT audit_id, stage_token, op_kind, memory_id, detail, applied_at_ms FROM audit"
            " WHERE audit_id > ? ORDER BY audit_id LIMIT ?", (mark.last_audit_id, AUDIT_PAGE)).fetchall()
        self.more = len(rows) == AUDIT_PAGE
        if self.more:
            # Leave a batch the page cut in two for the next read (a batch commits atomically).
            tail = rows[-1][1]
            rows = [row for row in rows if row[1] != tail] or rows
        if not rows:
            return []
        scopes = self._scopes([row[3] for row in rows if row[3]])
        pendings = self._pendings_by_token({row[1] for row in rows})
        out: list[IncomingEvent] = []
        for token, group in groupby(rows, key=lambda row: row[1]):
            out += self._batch_events(mark, list(group), scopes, pendings.get(token))
        mark.last_audit_id = rows[-1][0]
        return out

    def _batch_events(self, mark: _Mark, rows: list[tuple], scopes: dict[str, tuple[str, str]],
                      pending: _Pending | None) -> list[IncomingEvent]:
        first_id, at = rows[0][0], rows[0][5]
        details = [_json_object(row[4]) for row in rows]
        if details[0].get("op") == "markdown_import" or rows[0][2] == "import_summary":
            return []
        author = details[0].get("author") or {}
        out: list[IncomingEvent] = []
        run_id = author.get("run_id") if author.get("author") == "steward" else None
        if isinstance(run_id, str) and self._run_is_new(mark, run_id):
            out.append(self._event(mark, f"run:{run_id}:started", "memory.dream.started", at, {"run_id": run_id}))

        review = details[0].get("review")
        if isinstance(review, dict):
            # docs/store-format.md §6: record id and verdict only; never the reviewer, rationale or text.
            origin = review.get("origin")
            data = {"record_id": origin, "verdict": review.get("verdict"), **_scope_data(scopes.get(origin))}
            if review.get("successor"):
                data["successor_id"] = review["successor"]
            out.append(self._event(mark, f"audit:{first_id}:verdict", "memory.quarantine.verdict", at, data))
            return out

        if pending is not None:
            # The gate approved a staged promotion (docs/store-format.md §7.3): its create is the promoted record.
            created = next((row[3] for row in rows if row[2] in ("create", "supersede")), None)
            out.append(self._event(mark, f"audit:{first_id}:promoted", "memory.record.promoted", at, {
                "record_id": created, "source_record_id": pending.record_id,
                "scope_kind": pending.scope_kind, "scope_key": pending.scope_key,
                "proposal_id": None, "gated": True,
            }))
            return out

        quarantined = [(row, detail) for row, detail in zip(rows, details) if detail.get("quarantined")]
        if quarantined:
            # docs/store-format.md §6: one event per quarantined batch. It names the batch's first
            # quarantined record, so the timeline can name it to those who may read it (named.py).
            row, detail = quarantined[0]
            out.append(self._event(mark, f"audit:{first_id}:quarantined", "memory.write.quarantined", at, {
                "author": author_debug(author), "reason": detail["quarantined"], "record_id": row[3],
                **_scope_data(scopes.get(row[3])),
            }))
        for row, detail in zip(rows, details):
            event_type = RECORD_EVENT.get(row[2])
            if event_type is None or detail.get("quarantined") or not row[3]:
                continue
            scope = scopes.get(row[3])
            identity = scope[1] if scope and scope[0] == "identity" else SYSTEM_IDENTITY
            out.append(self._event(mark, f"audit:{row[0]}", event_type, at,
                                   {"record_id": row[3], **_scope_data(scope)}, identity=identity))
        return out

    def _run_is_new(self, mark: _Mark, run_id: str) -> bool:
        """First sight of a steward run: not announced yet, and its run sheet not already written."""
        if run_id in mark.started_runs:
            return False
        mark.started_runs = (mark.started_runs + [run_id])[-STARTED_RUNS_KEPT:]
        if self.has_dream_runs:
            done = self.conn.execute("SELECT rowid FROM dream_runs WHERE run_id=?", (run_id,)).fetchone()
            # A run sheet already past the mark was announced with its run; one beyond it is new.
            if done is not None and done[0] <= mark.last_dream_rowid:
                return False
        return True

    def _scopes(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        out: dict[str, tuple[str, str]] = {}
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for memory_id, kind, key in self.conn.execute(
                    f"SELECT memory_id, scope_kind, scope_key FROM records WHERE memory_id IN ({marks})", chunk):
                out[memory_id] = (kind, key)
        return out

    def _pendings_by_token(self, tokens: set[str]) -> dict[str, _Pending]:
        staged = [token for token in tokens if token.startswith("stage-")]
        out: dict[str, _Pending] = {}
        for start in range(0, len(staged), 500):
            chunk = staged[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for token, pending_id, record_id, kind, key in self.conn.execute(
                    "SELECT stage_token, pending_id, record_id, scope_kind, scope_key FROM pending_promotions"
                    f" WHERE stage_token IN ({marks})", chunk):
                out[token] = _Pending(pending_id, record_id, kind, key)
        return out

    # -- pending promotions and dream runs -----------------------------------------------------

    def _promotion_events(self, mark: _Mark) -> list[IncomingEvent]:
        out = []
        for rowid, pending_id, record_id, kind, key, created in self.conn.execute(
                "SELECT rowid, pending_id, record_id, scope_kind, scope_key, created_at_ms"
                " FROM pending_promotions WHERE rowid > ? ORDER BY rowid", (mark.last_promotion_rowid,)):
            out.append(self._event(mark, f"pending:{pending_id}", "memory.promotion.pending_gate", created, {
                "pending_id": pending_id, "record_id": record_id, "scope_kind": kind, "scope_key": key,
            }))
            mark.last_promotion_rowid = rowid
        return out

    def _dream_events(self, mark: _Mark) -> list[IncomingEvent]:
        out = []
        for rowid, run_id, started, completed, ops, detail in self.conn.execute(
                "SELECT rowid, run_id, started_at_ms, completed_at_ms, ops_committed, detail FROM dream_runs"
                " WHERE rowid > ? ORDER BY rowid", (mark.last_dream_rowid,)).fetchall():
            if run_id not in mark.started_runs:
                # A run that committed nothing still started (docs/store-format.md §6 emits both).
                mark.started_runs = (mark.started_runs + [run_id])[-STARTED_RUNS_KEPT:]
                out.append(self._event(mark, f"run:{run_id}:started", "memory.dream.started", started,
                                       {"run_id": run_id}))
            out.append(self._event(mark, f"run:{run_id}:completed", "memory.dream.completed", completed, {
                "run_id": run_id, "ops_committed": ops, "detail": _json_object(detail),
            }))
            mark.last_dream_rowid = rowid
        return out


def _json_object(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _scope_data(scope: tuple[str, str] | None) -> dict[str, str]:
    return {"scope_kind": scope[0], "scope_key": scope[1]} if scope else {}


# ---- a realm's history -------------------------------------------------------------------------

# docs/demo.md §5: the newest audit rows a freshly seeded realm puts on the timeline. A demo padded
# with a million notes still seeds in seconds; its story's weeks are what the timeline is for.
HISTORY_AUDIT_ROWS = 5000
HISTORY_STORE_CHUNK = 500
DAY_MS = 86_400_000
# The watermark fields a realm's history being on the timeline sets (docs/history.md §1).
HISTORY_DONE = {"backfilled": True, "backfill_days": None}


def backfill_since_ms(days: int) -> int:
    """The first moment a backfill of ``days`` days reaches back to."""
    return now_ms() - days * DAY_MS


def realm_history_store(*, realm: str) -> int:
    """Put what a freshly seeded realm ``realm`` holds on the timeline at once, and mark it read
    (docs/demo.md §5).

    The events are the watcher's own, with the times the store recorded, so a fresh demo's timeline
    shows its weeks of history; the watermark is moved past them in the same transaction, so a
    follower resumes after them instead of skipping the realm or telling it twice. Returns how
    many events were stored. A real deployment's realms get the same history from the watcher
    itself, page by page, in the background (``RealmWatcher``, docs/history.md §1).
    """
    reader = _RealmReader(realm)
    known = RealmWatermark.objects.filter(realm=realm).first()
    # A realm seeded again (--force) starts a new generation: its events are new ones.
    mark = reader.window(_Mark(generation=known.generation + 1 if known else 0), since_ms=0)
    with reader.session() as conn:
        newest = conn.execute("SELECT COALESCE(MAX(audit_id), 0) FROM audit").fetchone()[0]
    mark.last_audit_id = max(newest - HISTORY_AUDIT_ROWS, 0)
    events: list[IncomingEvent] = []
    while True:
        found, mark = reader.read(mark)
        events += found
        if not reader.more:
            break
    events.sort(key=lambda event: event.timestamp_ms)
    with transaction.atomic():
        for start in range(0, len(events), HISTORY_STORE_CHUNK):
            events_store(events=events[start : start + HISTORY_STORE_CHUNK])
        RealmWatermark.objects.update_or_create(realm=realm, defaults={**mark.__dict__, **HISTORY_DONE})
    return len(events)


def backfill_request(*, realms: Sequence[str], days: int) -> None:
    """Ask the lease holder to put the last ``days`` days of each realm's history on the timeline
    (again) at its next poll (docs/history.md §2). Events already there are recognised by their
    source ids, so nothing is told twice."""
    for realm in realms:
        RealmWatermark.objects.update_or_create(realm=realm, defaults={"backfilled": False, "backfill_days": days})


# ---- the watcher -------------------------------------------------------------------------------


class RealmWatcher:
    """Follows every realm file; ``poll_once`` stores and broadcasts whatever was committed since.

    A realm whose history is not on the timeline yet (never watched, or a backfill was asked for)
    is first read from the start of the backfill window, ``MOBKIT_TIMELINE_BACKFILL_DAYS``, one
    page per poll like any other read, so the follower goes on from there with no gap and no repeat
    (docs/history.md §1). With the window 0, a realm present when the watcher first looks starts at
    its current end and one that appears later is read from its first row.
    """

    def __init__(self, *, broadcast: Callable[[Sequence[TimelineEvent]], None] = events_broadcast_sync) -> None:
        self._readers: dict[str, _RealmReader] = {}
        self._started = False
        # watch_realms publishes through the channel layer from its own loop; the server's embedded
        # follower hands events to the server's loop instead (follower.py), since the in-memory
        # layer's queues belong to that loop.
        self._broadcast = broadcast

    def close(self) -> None:
        self._readers.clear()

    def catching_up(self) -> bool:
        """True while some realm's last read stopped at a page's end: its next poll reads on."""
        return any(reader.more for reader in self._readers.values())

    def poll_once(self) -> list[TimelineEvent]:
        names = set(realm_names())
        for gone in [name for name in self._readers if name not in names or self._readers[name].replaced()]:
            del self._readers[gone]
        stored: list[TimelineEvent] = []
        for name in sorted(names):
            try:
                stored += self._poll_realm(name)
            except (sqlite3.Error, OSError) as error:
                # A busy, half-written or foreign file, or a copy being restored afresh, must not
                # stop the other realms.
                logger.warning("realm %s: %s", name, error)
                self._readers.pop(name, None)
        self._started = True
        if stored:
            events_prune_due()
            self._broadcast(stored)
        return stored

    def _poll_realm(self, name: str) -> list[TimelineEvent]:
        reader = self._readers.get(name)
        if reader is None:
            reader = self._readers[name] = _RealmReader(name)
        if not reader.changed():
            return []
        watermark = RealmWatermark.objects.filter(realm=name).first()
        done: dict[str, Any] = {}
        if watermark is not None and watermark.backfilled:
            mark = _Mark.of(watermark)
        else:
            mark, done = self._history_start(reader, watermark), HISTORY_DONE
            if mark is None:
                return []
        events, mark = reader.read(mark)
        with transaction.atomic():
            rows = events_store(events=events) if events else []
            RealmWatermark.objects.update_or_create(realm=name, defaults={**mark.__dict__, **done})
        return new_events(rows)

    def _history_start(self, reader: _RealmReader, watermark: RealmWatermark | None) -> _Mark | None:
        """Where a realm whose history is not on the timeline is read from (docs/history.md §1);
        None when it was marked read at its end and there is nothing to read."""
        days = settings.MOBKIT_TIMELINE_BACKFILL_DAYS
        if watermark is not None and watermark.backfill_days is not None:
            days = watermark.backfill_days
        mark = _Mark.of(watermark) if watermark is not None else _Mark()
        if days > 0:
            return reader.window(mark, since_ms=backfill_since_ms(days))
        if watermark is None and not self._started:
            RealmWatermark.objects.create(realm=reader.realm, **reader.frontier(mark).__dict__, **HISTORY_DONE)
            return None
        return mark
