"""Charts at scale: counting a realm's history, drawing its chart pages cold and warm, and the
daily counts' size (docs/charts.md §5).

    .venv/bin/python bench/charts.py --records 100000 --keep /tmp/charts-state
    .venv/bin/python bench/charts.py --records 1000000 --keep /tmp/charts-1m

Seeds (once per ``--keep`` directory) a realm of ``--records`` records over 90 days in 50
identity scopes, one injection per 10 records and a tombstone per 20, through the store writer's
``bulk_apply``. Then, in process (no HTTP: what is measured is the charts' own cost):

- the first count of the realm's whole history (``console/daily/`` deleted first);
- each chart set (Holdings, injections, Quarantine, Dreams) and the realm's sparkline, selected
  and drawn to HTML: cold (the first request after the count, a new process's state) and warm
  (median of ``--reps``, the realm unchanged);
- the daily counts' bytes against the realm file's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mobkit_console.settings")

DAY_MS = 86_400_000
START_MS = 1_700_000_000_000
SCOPES = 50


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, required=True, help="the state directory (seeded once, reused)")
    parser.add_argument("--reps", type=int, default=10)
    return parser.parse_args()


def seed(root: Path, records: int) -> float:
    from memory_panel.simulator.store_writer import APPLICATION, ManualClock, StoreWriter, create_op, identity_scope, new_record
    from memory_panel.simulator.store_writer.ops import tombstone_op

    clock = ManualClock(START_MS)
    writer = StoreWriter.create("big", root=root, clock=clock)
    started = time.perf_counter()
    per_day = max(records // 90, 1)
    try:
        for first in range(0, records, per_day):
            clock.set(START_MS + (first // per_day) * DAY_MS)
            ops = [create_op(identity_scope("big", f"identity:agent-{i % SCOPES}"),
                             new_record(kind="fact", title=f"note {i}", body=f"body of note {i} " * 4))
                   for i in range(first, min(first + per_day, records))]
            receipts: list = []
            writer.bulk_apply(ops, author=APPLICATION, on_chunk=receipts.append)
            ids = [memory_id for receipt in receipts for memory_id in receipt.memory_ids]
            writer.bulk_apply([tombstone_op(memory_id) for memory_id in ids[::20]], author=APPLICATION)
            for n, memory_id in enumerate(ids[::10]):
                writer.record_injection(memory_id, f"identity:agent-{n % SCOPES}", count_usage=False)
    finally:
        writer.close()
    return time.perf_counter() - started


def main() -> None:
    args = parse_args()
    import django

    root = args.keep / "agent-memory"
    if not (root / "big.sqlite3").exists():
        root.mkdir(parents=True, exist_ok=True)
        print(f"seeding {args.records:,} records ...", flush=True)
        print(f"seeded in {seed(root, args.records):.0f} s")
    from django.conf import settings

    django.setup()
    settings.MOBKIT_PERSISTENT_STATE = args.keep
    settings.MOBKIT_AGENT_MEMORY_ROOT = root
    settings.MOBKIT_ACCESS_CONFIG = None
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False

    from django.template.loader import render_to_string

    from access.caller import Caller, access_for
    from memory_panel.selectors import charts
    from memory_panel.store import daily_counts
    from memory_panel.views.charts import ChartSection

    shutil.rmtree(daily_counts.DAILY_COUNTS.directory(), ignore_errors=True)
    started = time.perf_counter()
    daily_counts.DAILY_COUNTS.catch_up("big")
    count_seconds = time.perf_counter() - started
    access = access_for(Caller(subject="bench@example.test"))
    selectors = {"holdings": charts.holdings_charts, "injections": charts.injection_charts,
                 "quarantine": charts.quarantine_charts, "dreams": charts.dream_charts}

    def draw(name: str) -> float:
        begun = time.perf_counter()
        if name == "sparkline":
            charts.realm_sparklines(access=access, names=["big"])
        else:
            chart_set = selectors[name](access=access, realm="big", days=90)
            render_to_string("memory_panel/charts/_charts.html",
                             {"chart_sections": [ChartSection(name, name, chart_set)], "chart_windows": charts.WINDOWS})
        return (time.perf_counter() - begun) * 1000

    realm_bytes = sum(p.stat().st_size for p in root.glob("big.sqlite3*"))
    print(f"realm: {args.records:,} records, {realm_bytes / 2**20:.1f} MiB; first count of its history: {count_seconds:.1f} s")
    print(f"daily counts: {daily_counts.DAILY_COUNTS.size('big') / 2**10:.0f} KiB ({daily_counts.DAILY_COUNTS.size('big') / realm_bytes:.3%} of the realm)")
    print("| chart set (90 days) | cold ms | warm ms (median) |")
    print("|---|---:|---:|")
    for name in [*selectors, "sparkline"]:
        daily_counts.DAILY_COUNTS._current_at.clear()
        cold = draw(name)
        warm = statistics.median(draw(name) for _ in range(args.reps))
        print(f"| {name} | {cold:.1f} | {warm:.1f} |")


if __name__ == "__main__":
    main()
