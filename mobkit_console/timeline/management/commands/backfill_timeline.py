"""``python manage.py backfill_timeline [--realm NAME] [--days N]``: put realms' history on the timeline by hand.

The follower does this by itself for a realm it sees first (docs/history.md §1); this asks for it
again, for a longer window or after the log lost it. The work is the follower's, under its lease
(docs/history.md §2): with the lease free this command follows the realm files until the history
is read; while another process holds it, that process does it at its next poll.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory_panel.store.realms import realm_names
from mobkit_console.timeline.follower import follower_holder
from mobkit_console.timeline.watcher import RealmWatcher, backfill_request, lease_acquire, lease_holder, lease_release


class Command(BaseCommand):
    help = ("Put the last N days of each realm's history (from its audit rows) on the timeline; events "
            "already there are not told twice.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--realm", help="this realm alone (default: every realm, local and replica)")
        parser.add_argument("--days", type=int, default=None,
                            help="how far back (default: MOBKIT_TIMELINE_BACKFILL_DAYS, "
                                 f"{settings.MOBKIT_TIMELINE_BACKFILL_DAYS})")

    def handle(self, *args, realm: str | None, days: int | None, **options) -> None:
        days = settings.MOBKIT_TIMELINE_BACKFILL_DAYS if days is None else days
        if days <= 0:
            raise CommandError("--days must be 1 or more")
        known = realm_names()
        if realm is not None and realm not in known:
            raise CommandError(f"no realm named {realm!r} (realms: {', '.join(known) or 'none'})")
        realms = [realm] if realm is not None else known
        backfill_request(realms=realms, days=days)
        holder = follower_holder()
        lease_ms = int(settings.MOBKIT_TIMELINE_FOLLOW_LEASE_S * 1000)
        if not lease_acquire(holder=holder, ttl_ms=lease_ms):
            current = lease_holder()
            self.stdout.write(f"Asked the process that follows the realm files ({current[0] if current else 'unknown'})"
                              f" to put the last {days} days of {len(realms)} realm(s) on the timeline; it does so"
                              " in the background.")
            return
        watcher = RealmWatcher()
        stored = 0
        try:
            while True:
                stored += len(watcher.poll_once())
                if not watcher.catching_up():
                    break
                lease_acquire(holder=holder, ttl_ms=lease_ms)
        finally:
            watcher.close()
            lease_release(holder=holder)
        self.stdout.write(f"Put {stored} event{'s' if stored != 1 else ''} of the last {days} days of "
                          f"{len(realms)} realm(s) on the timeline.")
