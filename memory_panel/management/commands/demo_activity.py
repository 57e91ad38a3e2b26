"""``python manage.py demo_activity [--realm NAME …] [--interval S] [--once] [--seed N]`` (docs/demo.md §3)."""

from __future__ import annotations

import threading

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory_panel import conf
from memory_panel.management.stopping import stop_on_signals
from memory_panel.simulator.demo.activity import NotADemoRealm, demo_realms, run_activity


class Command(BaseCommand):
    help = ("Write believable ongoing activity into the demo realms seed_demo wrote (agents remembering "
            "and updating, a quarantined web-tainted write, a reviewer's verdict, a steward dream, a "
            "gated promotion, injections), one action every --interval seconds, until stopped.")
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--realm", action="append", default=[],
                            help="a demo realm to write to (repeatable; default: every demo realm)")
        parser.add_argument("--interval", type=float, default=3.0,
                            help="seconds between actions (default: %(default)s)")
        parser.add_argument("--once", action="store_true",
                            help="run every kind of action once in each realm, then exit")
        parser.add_argument("--seed", type=int, default=None, help="seed the wording, for repeatable runs")

    def handle(self, *args, realm: list[str], interval: float, once: bool, seed: int | None,
               **options) -> None:
        if interval < 0:
            raise CommandError("--interval must be zero or more seconds")
        root = conf.agent_memory_root()
        try:
            realms = demo_realms(root, realm)
        except NotADemoRealm as exc:
            raise CommandError(str(exc)) from exc
        if not realms:
            raise CommandError(f"no demo realms under {root}: run 'manage.py seed_demo' first")
        self.stdout.write(f"demo activity in {', '.join(realms)} every {interval:g}s (Ctrl-C stops)")
        stop = threading.Event()
        # SIGINT and SIGTERM stop the run after the beat in progress, never mid-transaction.
        with stop_on_signals(stop):
            try:
                done = run_activity(root=root, realms=realms, interval=interval, rounds=1 if once else None,
                                    stop=stop, report=self._report, seed=seed)
            except NotADemoRealm as exc:
                raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(f"stopped after {done} actions"))

    def _report(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()
