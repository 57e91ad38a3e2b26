"""``manage.py watch_realms``: follow the realm files in a process of its own.

Server processes follow them by default (docs/timeline-live.md §1); this command is for deployments
that turn that off (MOBKIT_TIMELINE_FOLLOW_REALMS=0) and run the follower separately. It publishes
through the channel layer, so its events reach sockets at once only with REDIS_URL set; otherwise
each server's fan-out finds them in the log (docs/timeline-live.md §4).
"""

from __future__ import annotations

import threading

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from memory_panel.management.stopping import stop_on_signals
from mobkit_console.timeline.follower import RealmFollower, follower_holder


class Command(BaseCommand):
    help = (
        "Follow every realm file and publish its memory events to the timeline. A lease row in the "
        "console database keeps exactly one follower per deployment (this command or a server "
        "process); a second copy stands by until the first stops (or misses renewing its lease for "
        "--lease-seconds)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--interval", type=float, default=0.25, help="seconds between polls (default 0.25)")
        parser.add_argument("--lease-seconds", type=float, default=15.0,
                            help="how long the lease outlives a silent holder (default 15)")
        parser.add_argument("--once", action="store_true", help="poll once (if the lease is free) and exit")

    def handle(self, *args, **options) -> None:
        if settings.CHANNEL_LAYERS["default"]["BACKEND"].endswith("InMemoryChannelLayer"):
            self.stderr.write("REDIS_URL is not set: events are stored, but open pages get them from the log up "
                              "to about 2 s late (a separate process reaches the server's sockets at once only "
                              "through Redis)")
        follower = RealmFollower(holder=follower_holder(), interval_s=options["interval"],
                                 lease_s=options["lease_seconds"], report=self._report)
        stop = threading.Event()
        with stop_on_signals(stop):
            follower.run(stop, once=options["once"], verbose=options["verbosity"] > 1)

    def _report(self, state: str, message: str) -> None:
        (self.stdout if state in ("leading", "stored") else self.stderr).write(message)
