"""``python manage.py seed_demo [--realm NAME] [--records N] [--force]`` (docs/wire-contract.md §C.6)."""

from __future__ import annotations

import sys
import time

from memory_panel import conf
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from memory_panel.services.demo import DEFAULT_REALM, SECOND_REALM, seed_demo


class Command(BaseCommand):
    help = ("Write a realistic demo realm (and the second realm 'team:blue') into the agent-memory "
            "directory through the store writer.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--realm", default=DEFAULT_REALM, help="realm name (default: %(default)s)")
        parser.add_argument("--records", type=int, default=0,
                            help="total records wanted in the realm; generated notes pad the story up to N")
        parser.add_argument("--force", action="store_true", help="replace existing realm files")

    def handle(self, *args, realm: str, records: int, force: bool, **options) -> None:
        if not realm.strip():
            raise CommandError("--realm must not be empty")
        if records < 0:
            raise CommandError("--records must be zero or more")
        root = conf.agent_memory_root()
        root.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        bar = tqdm(total=records, unit="rec", desc=f"seeding {realm}", disable=records < 10_000,
                   file=sys.stderr)
        try:
            summary = seed_demo(root=root, realm=realm, records=records, force=force,
                                second_realm=SECOND_REALM, progress=bar.update)
        except FileExistsError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        for name, path in summary.realms.items():
            self.stdout.write(f"{name}: {summary.records[name]} records -> {path}")
        self.stdout.write(self.style.SUCCESS(f"seeded in {time.monotonic() - started:.1f}s"))
