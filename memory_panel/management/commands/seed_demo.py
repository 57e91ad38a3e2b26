"""``python manage.py seed_demo [--realm NAME] [--records N] [--force] [--no-timeline]`` (docs/wire-contract.md §C.6)."""

from __future__ import annotations

import sys
import time

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from memory_panel import conf
from memory_panel.signals import demo_realms_seeded
from memory_panel.simulator.demo import DEFAULT_REALM, SECOND_REALM, seed_demo


class Command(BaseCommand):
    help = (f"Write the demo realms '{DEFAULT_REALM}' and '{SECOND_REALM}' (or, with --realm, that realm "
            "alone) into the agent-memory directory through the store writer, with a legacy markdown "
            "file awaiting import and, if there is none yet, the operational ledger's state file.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--realm", help=f"write this realm alone (default: '{DEFAULT_REALM}' and "
                                            f"'{SECOND_REALM}')")
        parser.add_argument("--records", type=int, default=0,
                            help="total records wanted in the realm; generated notes pad the story up to N")
        parser.add_argument("--force", action="store_true", help="replace existing realm files")
        parser.add_argument("--no-timeline", action="store_true",
                            help="write the realm files alone, as an agent host without a console has them "
                                 "(docs/demo.md §6)")

    def handle(self, *args, realm: str | None, records: int, force: bool, no_timeline: bool,
               **options) -> None:
        if realm is not None and not realm.strip():
            raise CommandError("--realm must not be empty")
        if records < 0:
            raise CommandError("--records must be zero or more")
        root = conf.agent_memory_root()
        root.mkdir(parents=True, exist_ok=True)
        name = realm or DEFAULT_REALM
        started = time.monotonic()
        bar = tqdm(total=records, unit="rec", desc=f"seeding {name}", disable=records < 10_000,
                   file=sys.stderr)
        try:
            summary = seed_demo(root=root, realm=name, records=records, force=force,
                                second_realm=SECOND_REALM if realm is None else None,
                                ledger_dir=conf.persistent_state(), progress=bar.update)
        except FileExistsError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        for written, path in summary.realms.items():
            self.stdout.write(f"{written}: {summary.records[written]} records -> {path}")
        for path in summary.legacy_files:
            self.stdout.write(f"legacy markdown awaiting import -> {path}")
        if summary.ledger is not None:
            self.stdout.write(f"ledger state -> {summary.ledger}")
        if not no_timeline:
            self._announce(list(summary.realms))
        self.stdout.write(self.style.SUCCESS(f"seeded in {time.monotonic() - started:.1f}s"))

    def _announce(self, realms: list[str]) -> None:
        # docs/demo.md §5: the project's timeline takes the realms' history, with the times it happened.
        for _, answer in demo_realms_seeded.send_robust(sender=None, realms=realms):
            if isinstance(answer, Exception):
                self.stderr.write(f"The timeline did not take the demo's history ({answer}); "
                                  "run 'python manage.py migrate' first, then seed again with --force.")
            else:
                self.stdout.write(f"timeline: {answer}")
