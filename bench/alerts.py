"""Alert evaluation benchmark: what 100 rules over 10 realms cost per event and per minute.

    .venv/bin/python bench/alerts.py [--rules 100] [--realms 10] [--events 200] [--reps 20]

Writes 10 realms through the store writer in a throwaway directory (a few hundred records each,
written over the past week, some quarantined and reviewed), a rules file of 100 rules (event
rules: quarantine arrivals and write bursts; state rules: queue length and age, verdict tiles,
scope floors, unreadable realms), then times the evaluator's tick (docs/alerts.md §4) as the
watcher lease's holder runs it:

- per event: one store write, put on the timeline by the realm watcher (not timed), then one tick;
- an idle tick: no new event, no state check (at most one a second between polls that stored nothing);
- a state check: every state rule read against every realm (every MOBKIT_ALERTS_CHECK_INTERVAL_S);
- the alerts page's rules: each rule's state and 7-day preview (docs/alerts.md §6), the event
  rules replayed from the timeline, the queue and floor rules from the realms' history files.

Prints p50/p95 of each, and the evaluator's cost per minute at the defaults (at most one idle tick a second, a state check every 30 s) for an idle deployment and for one taking 60 events a minute.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import Row, configure_django, print_table  # noqa: E402

DAY_MS = 86_400_000


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", type=int, default=100)
    parser.add_argument("--realms", type=int, default=10)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--reps", type=int, default=20)
    return parser.parse_args()


def rules_text(count: int, realms: list[str]) -> str:
    kinds = [
        ('quarantine.arrived', 'threshold = 1000'),
        ('quarantine.arrived', 'tainted_only = true\nthreshold = 1000'),
        ('writes.burst', 'threshold = 1000'),
        ('writes.burst', 'threshold = 1000\nwindow = "10m"'),
        ('quarantine.queue.length', 'threshold = 100000'),
        ('quarantine.queue.oldest', 'threshold = "30d"'),
        ('tile.violated', 'tile = "lattice"'),
        ('realm.unreadable', ''),
        ('scope.floor', ''),
    ]
    out = []
    for number in range(count):
        when, extra = kinds[number % len(kinds)]
        scoped = f'realms = ["{realms[number % len(realms)]}"]\n' if number % 2 else ""
        out.append(f'[[rules]]\nid = "rule-{number}"\nwhen = "{when}"\n{extra}\n{scoped}'
                   f'notify = ["json://127.0.0.1:9/never"]\n')
    return "\n".join(out)


def main() -> None:
    args = parse_args()
    state = Path(tempfile.mkdtemp(prefix="alerts-bench-"))
    (state / "agent-memory").mkdir(parents=True)
    rules_path = state / "alerts.toml"
    realms = [f"realm-{number}" for number in range(args.realms)]
    rules_path.write_text(rules_text(args.rules, realms))
    import os

    os.environ["MOBKIT_ALERTS_CONFIG"] = str(rules_path)
    configure_django(state, state / "console.sqlite3")

    from django.core.management import call_command

    from memory_panel.simulator.store_writer import StoreWriter, agent, batch, create_op, identity_scope, new_record
    from memory_panel.simulator.store_writer.clock import ManualClock, wall_clock_ms
    from mobkit_console.alerts.evaluator import alerts_tick
    from mobkit_console.alerts.selectors import alert_rules_view
    from mobkit_console.timeline.watcher import RealmWatcher

    call_command("migrate", verbosity=0)
    # Each realm's records are written over the past week, some held in quarantine and reviewed
    # hours later, so the page's previews replay a week of history files (docs/alerts.md §6).
    clocks = {name: ManualClock(wall_clock_ms() - 7 * DAY_MS) for name in realms}
    writers = {name: StoreWriter.create(name, root=state / "agent-memory", clock=clocks[name]) for name in realms}
    for name, writer in writers.items():
        held: list[str] = []
        for number in range(200):
            clocks[name].advance(7 * DAY_MS // 220)
            scope = identity_scope(name, f"identity:agent-{number % 7}")
            if number % 10 == 0:
                op = create_op(scope, new_record(kind="fact", title=f"Held note {number}", body="From a page."))
                held += writer.apply_batch(batch(realm=name, author=agent(f"identity:agent-{number % 7}"), ops=[op]),
                                           gate_reason="session tainted by web tool 'web_fetch'").memory_ids
            else:
                writer.remember(scope, f"Note {number}", f"Body {number}.")
            if number % 20 == 15 and held:
                writer.review_quarantine(held.pop(0), "tombstone", reviewer={"kind": "operator", "principal": "root"})
    watcher = RealmWatcher(broadcast=lambda rows: None)
    watcher.poll_once()
    alerts_tick(check_state=True)

    per_event: list[float] = []
    for number in range(args.events):
        name = realms[number % len(realms)]
        writer = writers[name]
        clocks[name].set(max(wall_clock_ms(), clocks[name].now_ms + 1))
        identity = f"identity:agent-{number % 7}"
        scope = identity_scope(name, identity)
        if number % 4 == 0:
            op = create_op(scope, new_record(kind="fact", title=f"Held {number}", body="From a page."))
            writer.apply_batch(batch(realm=name, author=agent(identity), ops=[op]),
                               gate_reason="session tainted by web tool 'web_fetch'")
        else:
            writer.remember(scope, f"Event note {number}", "Body.")
        watcher.poll_once()
        started = time.perf_counter()
        report = alerts_tick(check_state=False)
        per_event.append((time.perf_counter() - started) * 1000)
        assert report.events == 1, report

    idle = []
    for _ in range(args.reps * 5):
        started = time.perf_counter()
        alerts_tick(check_state=False)
        idle.append((time.perf_counter() - started) * 1000)
    checks = []
    for _ in range(args.reps):
        started = time.perf_counter()
        alerts_tick(check_state=True)
        checks.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    alert_rules_view()  # the first read of each realm's history file replays its audit rows
    first_page = [(time.perf_counter() - started) * 1000]
    page = []
    for _ in range(args.reps):
        started = time.perf_counter()
        alert_rules_view()
        page.append((time.perf_counter() - started) * 1000)

    rows = [
        Row("tick", "one event, 100 rules", per_event),
        Row("tick", "idle (no event, no state check)", idle),
        Row("tick", "state check, 100 rules x 10 realms", checks),
        Row("page", "rules + 7-day previews, first (history files replayed)", first_page),
        Row("page", "rules + 7-day previews, 100 rules x 10 realms", page),
    ]
    print_table(rows)
    median = {row.name: sorted(row.samples)[len(row.samples) // 2] for row in rows}
    idle_minute = 60 * median["idle (no event, no state check)"] + 2 * median["state check, 100 rules x 10 realms"]
    busy_minute = idle_minute + 60 * (median["one event, 100 rules"] - median["idle (no event, no state check)"])
    print(f"\nper minute at the defaults: idle {idle_minute:.0f} ms of one core; with 60 events a minute "
          f"{busy_minute:.0f} ms ({busy_minute / 600:.1f}% of one core)")
    for writer in writers.values():
        writer.close()


if __name__ == "__main__":
    main()
