"""Following the realm files behind the watcher lease, from ``watch_realms`` or inside the server.

``RealmFollower`` is the one lease loop: lead (poll the realm files) while holding the lease,
stand by otherwise, hand the lease back on stop. ``watch_realms`` runs it in the foreground; by
default every server process also runs it in a thread of its own (docs/timeline-live.md §1), so
``runserver`` or one daphne turns store commits into live events with no second command. Several
processes share the lease, so exactly one of them follows the files at a time.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.db import connections

from .models import TimelineEvent
from .services import events_broadcast, events_broadcast_sync
from .signals import realms_followed
from .watcher import RealmWatcher, lease_acquire, lease_holder, lease_release

logger = logging.getLogger("mobkit_console.timeline")

Broadcast = Callable[[Sequence[TimelineEvent]], None]
# A bad moment of the console database (locked, restarting) must not end the follower: it retries.
ERROR_BACKOFF_S = 1.0


def follower_holder() -> str:
    """A lease holder name unique to this process: host, pid and start time."""
    return f"{socket.gethostname()}:{os.getpid()}:{time.time_ns()}"


class RealmFollower:
    """Lead while the lease is ours, stand by while another holder's is live."""

    def __init__(self, *, holder: str, interval_s: float, lease_s: float, broadcast: Broadcast = events_broadcast_sync,
                 report: Callable[[str, str], None] | None = None) -> None:
        self.holder = holder
        self.interval_s = interval_s
        self.lease_s = lease_s
        self.broadcast = broadcast
        self.report = report or (lambda state, message: logger.info("%s", message))
        self.leading = False

    def run(self, stop: threading.Event, *, once: bool = False, verbose: bool = False) -> None:
        watcher = RealmWatcher(broadcast=self.broadcast)
        renewed_at = float("-inf")
        try:
            while not stop.is_set():
                if time.monotonic() - renewed_at >= self.lease_s / 3:
                    watcher = self._renew(watcher)
                    renewed_at = time.monotonic()
                if self.leading:
                    stored = watcher.poll_once()
                    # docs/timeline-live.md §1: what else the lease holder does after each poll (alerts).
                    realms_followed.send(sender=RealmFollower, stored=stored)
                    if stored and verbose:
                        self.report("stored", f"Put {len(stored)} new event{'s' if len(stored) != 1 else ''}"
                                              " from the realm files on the timeline.")
                if once:
                    break
                stop.wait(self.interval_s if self.leading else self.lease_s / 3)
        finally:
            watcher.close()
            if self.leading:
                lease_release(holder=self.holder)
                self.leading = False

    def _renew(self, watcher: RealmWatcher) -> RealmWatcher:
        was_leading, self.leading = self.leading, lease_acquire(holder=self.holder, ttl_ms=int(self.lease_s * 1000))
        if self.leading and not was_leading:
            self.report("leading", "The timeline now follows the realm files: what agents write shows up live"
                                   f" (this process, {self.holder}, holds the watcher lease).")
        elif was_leading and not self.leading:
            self.report("lost", "Another process took over following the realm files; this one stands by.")
            # The new holder owns the watermarks now; start afresh from them if the lease returns.
            watcher.close()
            return RealmWatcher(broadcast=self.broadcast)
        elif not self.leading:
            current = lease_holder()
            self.report("standby", f"Another process ({current[0] if current else 'unknown'}) follows the realm"
                                   " files for the timeline; this one stands by.")
        return watcher


# ---- the follower inside a server process ------------------------------------------------------


class EmbeddedFollower:
    """A daemon thread running RealmFollower, publishing on the server's event loop.

    The in-memory channel layer's queues belong to the loop the sockets run on, so a broadcast from
    this thread is handed to that loop rather than sent from a loop of the thread's own.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.stop_event = threading.Event()
        self.follower = RealmFollower(
            holder=follower_holder(),
            interval_s=settings.MOBKIT_TIMELINE_FOLLOW_INTERVAL_S,
            lease_s=settings.MOBKIT_TIMELINE_FOLLOW_LEASE_S,
            broadcast=self._broadcast,
        )
        self.thread = threading.Thread(target=self._run, name="realm-follower", daemon=True)

    def start(self) -> None:
        self.thread.start()
        atexit.register(self.stop)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop polling and hand the lease back, so a standby process takes over at once."""
        self.stop_event.set()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(timeout_s)
        if self.thread.is_alive():
            # Still inside a slow poll (a loaded machine): hand the lease back from here, since the
            # process ends with this call and a standby would otherwise wait out the lease.
            lease_release(holder=self.follower.holder)

    def _broadcast(self, rows: Sequence[TimelineEvent]) -> None:
        if self.loop.is_closed():
            return  # the server is shutting down: its sockets are gone, the events are stored
        future = asyncio.run_coroutine_threadsafe(events_broadcast(rows), self.loop)
        try:
            future.result(timeout=10)
        except Exception:  # noqa: BLE001 - the events are stored: the fan-outs send them from the log
            logger.exception("realm follower: broadcast failed")

    def _run(self) -> None:
        try:
            while not self.stop_event.is_set():
                try:
                    self.follower.run(self.stop_event)
                except Exception:  # noqa: BLE001 - see ERROR_BACKOFF_S
                    logger.exception("realm follower failed; retrying")
                    connections.close_all()
                    self.stop_event.wait(ERROR_BACKOFF_S)
        finally:
            connections.close_all()


_embedded: EmbeddedFollower | None = None
_embedded_lock = threading.Lock()


def embedded_follower_start(loop: asyncio.AbstractEventLoop) -> EmbeddedFollower | None:
    """Start this process's follower once (no-op when MOBKIT_TIMELINE_FOLLOW_REALMS is off)."""
    global _embedded
    if not settings.MOBKIT_TIMELINE_FOLLOW_REALMS:
        return None
    with _embedded_lock:
        if _embedded is None:
            _embedded = EmbeddedFollower(loop)
            _embedded.start()
    return _embedded


class FollowRealmsMiddleware:
    """ASGI middleware: the first request a server process serves starts its embedded follower.

    Started from here rather than from AppConfig.ready, so ``migrate``, ``shell`` or a test run never
    follow realms, and on the server's own loop, which the follower publishes on. (daphne sends no
    ASGI lifespan events; its readiness probe or first visitor is that first request.)
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.started = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not self.started:
            self.started = True
            embedded_follower_start(asyncio.get_running_loop())
        await self.app(scope, receive, send)
