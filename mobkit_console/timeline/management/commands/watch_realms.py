"""``manage.py watch_realms``: the one process per deployment that turns realm commits into events."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

from django.core.management.base import BaseCommand, CommandParser

from mobkit_console.timeline.watcher import RealmWatcher, lease_acquire, lease_holder, lease_release


class Command(BaseCommand):
    help = (
        "Follow every realm file and publish its memory events to the timeline. Run one per "
        "deployment: a lease row in the console database keeps a second copy on standby until "
        "the first stops (or misses renewing its lease for --lease-seconds)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--interval", type=float, default=0.25, help="seconds between polls (default 0.25)")
        parser.add_argument("--lease-seconds", type=float, default=15.0,
                            help="how long the lease outlives a silent holder (default 15)")
        parser.add_argument("--once", action="store_true", help="poll once (if the lease is free) and exit")

    def handle(self, *args, **options) -> None:
        holder = f"{socket.gethostname()}:{os.getpid()}:{time.time_ns()}"
        ttl_ms = int(options["lease_seconds"] * 1000)
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        watcher = RealmWatcher()
        renewed_at = 0.0
        leading = False
        try:
            while not stop.is_set():
                if time.monotonic() - renewed_at >= options["lease_seconds"] / 3:
                    was_leading, leading = leading, lease_acquire(holder=holder, ttl_ms=ttl_ms)
                    renewed_at = time.monotonic()
                    if leading and not was_leading:
                        self.stdout.write(f"watching realms as {holder}")
                    elif was_leading and not leading:
                        self.stderr.write("lost the watcher lease; standing by")
                        watcher.close()
                        watcher = RealmWatcher()
                    elif not leading:
                        current = lease_holder()
                        self.stderr.write(f"another watcher holds the lease ({current[0] if current else '?'}); standing by")
                if leading:
                    stored = watcher.poll_once()
                    if stored and options["verbosity"] > 1:
                        self.stdout.write(f"stored {len(stored)} events")
                if options["once"]:
                    break
                stop.wait(options["interval"] if leading else options["lease_seconds"] / 3)
        finally:
            watcher.close()
            if leading:
                lease_release(holder=holder)
