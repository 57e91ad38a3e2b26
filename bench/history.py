"""Memory over time benchmark: a realm's history put on the timeline, and the pages at a moment.

    .venv/bin/python bench/history.py [--records 100000] [--reps 20]

Seeds a demo realm without its timeline (``seed_demo --no-timeline``, as an agent host writes it)
in a throwaway directory, then measures (docs/history.md):

- the backfill: a follower's polls, page by page, until the realm's 30 days are on the timeline;
- the replay of the realm's audit rows that every page at a moment starts from (cold: the first
  request after the file moved), and the Records page at a moment once the replay is kept;
- Holdings at a moment, and what changed over the last 30 days (first page, every change counted).

The moment is just after the seeding, so every record existed then: the most rows a moment has.

Pages go through the real endpoints (Django's test client, a signed-in user, every middleware).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import REALM, Row, configure_django, print_table, timed  # noqa: E402

DAY_MS = 86_400_000


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=20)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    state = Path(tempfile.mkdtemp(prefix="history-bench-"))
    configure_django(state, state / "console.sqlite3")

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from memory_panel.store import history
    from memory_panel.store.rows import realm_read
    from mobkit_console.timeline.models import TimelineEvent
    from mobkit_console.timeline.watcher import RealmWatcher

    call_command("migrate", verbosity=0)
    started = time.monotonic()
    call_command("seed_demo", realm=REALM, records=args.records, no_timeline=True, verbosity=0)
    print(f"seeded {args.records:,} records in {time.monotonic() - started:.0f} s under {state}")

    watcher = RealmWatcher(broadcast=lambda rows: None)
    started, polls = time.perf_counter(), 0
    while True:
        watcher.poll_once()
        polls += 1
        if not watcher.catching_up():
            break
    backfill_s = time.perf_counter() - started
    watcher.close()
    print(f"backfill: {TimelineEvent.objects.count():,} events in {polls} polls, {backfill_s:.1f} s")

    def replay() -> None:
        # The replay itself, not its kept answer: what the first page after a commit pays.
        with realm_read(REALM, alone=True):
            history._replayed(REALM)

    client = Client()
    client.force_login(get_user_model().objects.create_user("admin"))
    now_ms = int(time.time() * 1000)
    moment = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now_ms / 1000 + 1))
    month = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime((now_ms - 30 * DAY_MS) / 1000))

    def page(path: str, params: dict[str, str]) -> None:
        response = client.get(path, {"realm": REALM, **params})
        assert response.status_code == 200, (path, response.status_code)

    rows = [
        Row("history", "replay of the audit rows (cold)", timed(replay, args.reps)),
        Row("history", "Records at the moment (replay kept)",
            timed(lambda: page("/console/memory/records/", {"as_of": moment}), args.reps)),
        Row("history", "Holdings at the moment",
            timed(lambda: page("/console/memory/", {"as_of": moment}), args.reps)),
        Row("history", "changes over 30 days, first page",
            timed(lambda: page("/console/memory/changes/", {"from": month, "to": moment}), args.reps)),
    ]
    print_table(rows)


if __name__ == "__main__":
    main()
