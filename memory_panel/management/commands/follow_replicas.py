"""``python manage.py follow_replicas``: keep a local copy of every realm of MOBKIT_REPLICA_SOURCES
current with Litestream's follow mode (docs/replicas.md §3)."""

from __future__ import annotations

import threading

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory_panel import conf
from memory_panel.management.stopping import stop_on_signals
from memory_panel.replicas import ReplicaSourceError, Supervisor, litestream_binary
from memory_panel.replica_sources import redacted


class Command(BaseCommand):
    help = ("Find every realm database in each MOBKIT_REPLICA_SOURCES source, keep a read-only local copy "
            "of each current with 'litestream restore -f' under <state>/console/replicas/, pick up realms "
            "that appear later and restart a follower that dies. Runs until SIGTERM or Ctrl-C.")
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--follow-interval-ms", type=int, default=1000,
                            help="how often each follower polls its replica (default: %(default)s)")
        parser.add_argument("--list-interval-s", type=float, default=10.0,
                            help="how often S3 and SFTP sources are listed for new realms and their newest "
                                 "transaction; file:// sources are listed every second (default: %(default)s)")

    def handle(self, *args, follow_interval_ms: int, list_interval_s: float, **options) -> None:
        sources = conf.replica_sources()
        if not sources:
            raise CommandError("MOBKIT_REPLICA_SOURCES is empty: name at least one label=<replica URL>")
        if follow_interval_ms < 10:
            raise CommandError("--follow-interval-ms must be at least 10")
        if not 1 <= list_interval_s <= 3600:
            raise CommandError("--list-interval-s must be between 1 and 3600")
        try:
            binary = litestream_binary()
        except ReplicaSourceError as error:
            raise CommandError(str(error)) from None
        root = conf.replica_copies_root()
        self.stdout.write(f"following {', '.join(f'{label}={redacted(url)}' for label, url in sources.items())} "
                          f"into {root} with {binary}", ending="\n")
        self.stdout.flush()
        stop = threading.Event()
        with stop_on_signals(stop):
            Supervisor(sources=sources, copies_root=root, binary=binary, interval_ms=follow_interval_ms,
                       remote_list_s=list_interval_s).run(stop)
