"""Writing the audit log (docs/audit-and-oidc.md §2).

Most entries are queued in memory and written by a background thread in batches (``bulk_create``),
so an audited request pays for building one small object. The exception is a quarantined body
read: its entries are written before the body is shown (``audit_write_now``), and a failure refuses
the read. Queued entries a failure loses are logged, never retried into the request.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.http import HttpRequest
from django.utils import timezone

from access.caller import ANONYMOUS, Caller

from mobkit_console.audit.models import AuditEntry
from mobkit_console.observability import metrics

logger = logging.getLogger("mobkit_console.audit")

# A queue longer than this is written at once rather than at the next tick.
BATCH_SIZE = 500
# How often the background thread asks whether entries are past their retention.
PRUNE_EVERY = timedelta(hours=1)


@dataclass(frozen=True)
class Actor:
    """Who is asking, as the audit log names them: set once per request by ``AuditActorMiddleware``."""

    subject: str = ""
    sign_in: str = ""  # Caller.sign_in: session | oidc | token | jwt, "" when not signed in
    client: str = ""


NOBODY = Actor()
_actor: ContextVar[Actor] = ContextVar("audit_actor", default=NOBODY)


def actor_for(request: HttpRequest, *, caller: Caller | None = None) -> Actor:
    """``caller`` (else the request's, ``request.caller``), named with the request's client address."""
    who = caller if caller is not None else getattr(request, "caller", ANONYMOUS)
    return Actor(subject=who.subject or "", sign_in=who.sign_in, client=request.META.get("REMOTE_ADDR", ""))


def actor_set(actor: Actor) -> None:
    # Not reset when the response returns: a streamed export records its entry after that, in a
    # copy of the request's context (memory_panel/views/export.py).
    _actor.set(actor)


def audit_entry(
    *,
    action: str,
    outcome: str = "ok",
    realm: str | None = None,
    target: str | None = None,
    detail: dict[str, Any] | None = None,
    actor: Actor | None = None,
) -> AuditEntry:
    """One entry, by the current request's actor unless ``actor`` says otherwise."""
    who = _actor.get() if actor is None else actor
    return AuditEntry(
        at=timezone.now(),
        subject=who.subject,
        sign_in=who.sign_in,
        client=who.client,
        action=action,
        realm=realm or "",
        target=(target or "")[:255],
        outcome=outcome,
        detail=detail or {},
    )


def audit_record(**fields: Any) -> None:
    """Queue one entry (``audit_entry``'s arguments) for the background writer."""
    _writer.put(audit_entry(**fields))


def audit_write_now(entries: Iterable[AuditEntry]) -> None:
    """Write entries before going on (fail closed): raises when they could not be stored."""
    written = list(entries)
    _store(written)
    metrics.audit_entries_written.inc(len(written))


def _store(entries: list[AuditEntry]) -> None:
    # Its own transaction (a savepoint inside a caller's): a refused write leaves the caller's usable.
    with transaction.atomic():
        AuditEntry.objects.bulk_create(entries)


def audit_flush() -> None:
    """Write every queued entry now, in this thread (the audit pages read their own process's
    queue this way, and tests and benchmarks wait for it)."""
    _writer.flush()


def audit_prune() -> int:
    """Delete entries older than MOBKIT_AUDIT_RETENTION_DAYS (0 keeps them all); how many went."""
    days = settings.MOBKIT_AUDIT_RETENTION_DAYS
    if days <= 0:
        return 0
    return AuditEntry.objects.prune(before=timezone.now() - timedelta(days=days))


class _Writer:
    """The in-process queue and the thread that empties it (started by the first entry queued)."""

    def __init__(self) -> None:
        self._pending: list[AuditEntry] = []
        self._lock = threading.Lock()  # guards _pending
        self._flushing = threading.Lock()  # one flush at a time, so a flush that returns wrote all before it
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pruned_at = timezone.now() - PRUNE_EVERY

    def put(self, entry: AuditEntry) -> None:
        with self._lock:
            self._pending.append(entry)
            backlog = len(self._pending)
        metrics.audit_entries_queued.inc()
        if self._thread is None:
            self._start()
        if backlog >= BATCH_SIZE:
            self._wake.set()

    def flush(self) -> None:
        with self._flushing:
            with self._lock:
                batch, self._pending = self._pending, []
            if not batch:
                return
            try:
                _store(batch)
            except Exception:  # noqa: BLE001 - the requests these came from already answered
                logger.exception("audit log: %d entries could not be written and are lost", len(batch))
                metrics.audit_entries_lost.inc(len(batch))
            else:
                metrics.audit_entries_written.inc(len(batch))

    def _start(self) -> None:
        with self._lock:
            # docs/audit-and-oidc.md §2: 0 means no thread; entries wait for an audit read or exit.
            if self._thread is not None or settings.MOBKIT_AUDIT_FLUSH_INTERVAL_S <= 0:
                return
            self._thread = threading.Thread(target=self._run, name="audit-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        interval = settings.MOBKIT_AUDIT_FLUSH_INTERVAL_S
        while True:
            self._wake.wait(interval)
            self._wake.clear()
            close_old_connections()
            self.flush()
            if timezone.now() - self._pruned_at >= PRUNE_EVERY:
                self._pruned_at = timezone.now()
                try:
                    if pruned := audit_prune():
                        logger.info("The audit log removed %d entries older than its retention period.", pruned)
                except Exception:  # noqa: BLE001 - retried at the next PRUNE_EVERY
                    logger.exception("audit log: pruning failed")

    def exit(self) -> None:
        self.flush()
        connections.close_all()


_writer = _Writer()
atexit.register(_writer.exit)
