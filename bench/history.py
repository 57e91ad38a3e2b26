"""Memory over time benchmark: a realm's history put on the timeline, and the pages at a moment.

    .venv/bin/python bench/history.py [--records 1000000] [--reps 20] [--keep DIR] [--backfill]

Seeds a demo realm without its timeline (``seed_demo --no-timeline``, as an agent host writes it)
in a throwaway directory (or in ``--keep DIR``, reused when already seeded), then measures
(docs/history.md):

- the replay of the realm's audit rows into the console's history file (from nothing), and the
  file's size against the realm's, with its largest tables and indexes;
- each page cold (the first request of a fresh process, the history file built) and warm: the
  Records page at a moment, Holdings at a moment, and what changed over the last 30 days (first
  page, every change counted), and the Records page at a moment 90% of the way down;
- catching up: one more batch written to the realm, then the first page at a moment;
- with ``--backfill``, the timeline backfill: a follower's polls until the realm's 30 days are on it.

The moment is just after the seeding, so every record existed then: the most rows a moment has.

Pages go through the real endpoints (Django's test client, a signed-in user, every middleware).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import REALM, Row, configure_django, print_table, timed  # noqa: E402

DAY_MS = 86_400_000


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="persistent-state directory kept between runs (reused if seeded)")
    parser.add_argument("--backfill", action="store_true", help="also time the timeline backfill")
    return parser.parse_args()


def once(call: Callable[[], object]) -> list[float]:
    started = time.perf_counter()
    call()
    return [(time.perf_counter() - started) * 1000]


def main() -> None:
    args = parse_args()
    state = args.keep or Path(tempfile.mkdtemp(prefix="history-bench-"))
    state.mkdir(parents=True, exist_ok=True)
    configure_django(state, state / "console.sqlite3")

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from memory_panel.cursor import MomentCursor
    from memory_panel.store import history_file
    from memory_panel.store.realms import realm_path
    from memory_panel.simulator.store_writer import StoreWriter, identity_scope

    call_command("migrate", verbosity=0)
    realm_file = realm_path(REALM)
    if not realm_file.exists():
        started = time.monotonic()
        call_command("seed_demo", realm=REALM, records=args.records, no_timeline=True, verbosity=0)
        print(f"seeded {args.records:,} records in {time.monotonic() - started:.0f} s under {state}")
    if args.backfill:
        backfill()

    history_file.HISTORY.path(REALM).unlink(missing_ok=True)
    started = time.perf_counter()
    history_file.HISTORY.catch_up(REALM)
    build_s = time.perf_counter() - started
    realm_bytes, kept_bytes = realm_file.stat().st_size, history_file.HISTORY.size(REALM)
    print(f"history file built in {build_s:.1f} s: {kept_bytes / 2**20:,.0f} MiB for a {realm_bytes / 2**20:,.0f} MiB "
          f"realm ({kept_bytes / realm_bytes:.0%})")
    with sqlite3.connect(f"file:{history_file.HISTORY.path(REALM)}?mode=ro", uri=True) as conn:
        largest = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 4").fetchall()
    print("  of which " + ", ".join(f"{name} {size / 2**20:.1f} MiB" for name, size in largest))

    user = get_user_model().objects.get_or_create(username="admin")[0]
    client = Client()
    client.force_login(user)
    with sqlite3.connect(f"file:{realm_file}?mode=ro", uri=True) as conn:
        newest_ms = conn.execute("SELECT MAX(applied_at_ms) FROM audit").fetchone()[0]
    # The Records page's cursor 90% of the way down at the moment: the keyset of the history file.
    with sqlite3.connect(f"file:{history_file.HISTORY.path(REALM)}?mode=ro", uri=True) as conn:
        deep = conn.execute("SELECT from_ms, record, n FROM spans WHERE to_ms IS NULL"
                            " ORDER BY from_ms DESC, record DESC, n DESC LIMIT 1 OFFSET ?", (int(args.records * 0.9),)).fetchone()
    moment = iso(newest_ms + 1000)
    month = iso(newest_ms - 30 * DAY_MS)

    def page(path: str, params: dict[str, str]) -> Callable[[], None]:
        def get() -> None:
            response = client.get(path, {"realm": REALM, **params})
            assert response.status_code == 200, (path, response.status_code, response.content[:300])
        return get

    pages = [
        ("Records at the moment", page("/console/memory/records/", {"as_of": moment})),
        ("Records at the moment, 90% down", page("/console/memory/records/",
                                                  {"as_of": moment, "cursor": MomentCursor(deep[0], REALM, *deep[1:]).encode()})),
        ("Holdings at the moment", page("/console/memory/", {"as_of": moment})),
        ("changes over 30 days, first page", page("/console/memory/changes/", {"from": month, "to": moment})),
    ]
    rows = [Row("history", "history file built from nothing", [build_s * 1000])]
    for name, get in pages:
        rows.append(Row("history", f"{name} (cold)", once(get)))
        rows.append(Row("history", f"{name} (warm)", timed(get, args.reps)))

    # A batch written after the history was built: the next page replays it first.
    with StoreWriter.open(REALM, root=realm_file.parent) as writer:
        writer.remember(identity_scope(REALM, "identity:bench"), "bench: one more", "Written after the build.")
    rows.append(Row("history", "Records at the moment after one more batch", once(pages[0][1])))
    print_table(rows)


def iso(at_ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at_ms / 1000))


def backfill() -> None:
    from mobkit_console.timeline.models import TimelineEvent
    from mobkit_console.timeline.watcher import RealmWatcher

    watcher = RealmWatcher(broadcast=lambda rows: None)
    started, polls = time.perf_counter(), 0
    while True:
        watcher.poll_once()
        polls += 1
        if not watcher.catching_up():
            break
    watcher.close()
    print(f"backfill: {TimelineEvent.objects.count():,} events in {polls} polls, {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
