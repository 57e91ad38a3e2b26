"""Cursor-walk benchmark: does a keyset page cost the same at the end of a realm as at the start?

Writes one 100,000-record realm with the store writer's bulk path into a throwaway
MOBKIT_PERSISTENT_STATE, then follows ``next_cursor`` through ``mobkit/memory/panel/records``
at limit 100 (1,000 pages: the whole realm) via the real ``POST /console/rpc`` endpoint, and prints
the median and p95 per-page time of the first and the last 100 pages.

    .venv/bin/python bench/rpc_cursor_walk.py [--records N] [--limit L] [--direct]

A keyset cursor (docs/store-format.md §5.1) seeks the (updated_at_ms, memory_id) position instead of
skipping rows, so the last pages should cost about what the first ones do: a ratio near 1. The
realm file has no index for that order, so by default the console's own realm index
(memory_panel/realm_index.py) is built first, outside the timed walk; ``--direct`` turns it off
and measures the plain query against the realm file instead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
T0 = 1_700_000_000_000
IDENTITIES = 40


def configure(state_dir: Path, *, direct: bool) -> None:
    """Point Django at throwaway state: its own console database, no access config."""
    os.environ["MOBKIT_PERSISTENT_STATE"] = str(state_dir)
    if direct:
        os.environ["MOBKIT_REALM_INDEX_MIN_ROWS"] = str(2**62)
    for name in ("MOBKIT_AGENT_MEMORY_ROOT", "MOBKIT_ACCESS_CONFIG", "DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    os.environ["DJANGO_ALLOWED_HOSTS"] = "testserver,localhost"
    os.environ["DJANGO_SETTINGS_MODULE"] = "mobkit_console.settings"
    sys.path.insert(0, str(REPO))
    # No collectstatic in a throwaway state dir; whitenoise's warning about it is noise here.
    warnings.filterwarnings("ignore", message="No directory at")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def write_realm(records: int) -> float:
    """The realm through StoreWriter.bulk_apply; returns the seconds it took."""
    from memory_panel.simulator.store_writer import APPLICATION, StoreWriter, create_op, identity_scope, new_record

    def ops():
        for i in range(records):
            # Runs of four records share a timestamp, so the walk also crosses id tie-breaks.
            at = T0 + (i // 4) * 7
            scope = identity_scope("bench", f"identity:agent-{i % IDENTITIES:02d}")
            record = new_record(kind="fact", title=f"Observation {i}",
                                body=f"Agent {i % IDENTITIES} noted fact number {i} during session {i // 97}.",
                                tags=["bench", f"batch-{i // 1024}"])
            yield create_op(scope, record, created_at_ms=at, updated_at_ms=at)

    started = time.perf_counter()
    with StoreWriter.create("bench") as writer:
        applied = writer.bulk_apply(ops(), author=APPLICATION)
    assert applied == records
    return time.perf_counter() - started


def walk(limit: int) -> tuple[list[float], int]:
    """Per-page seconds of one full walk, and the number of distinct rows seen."""
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client()
    client.force_login(User.objects.create_user("bench@example.test", email="bench@example.test"))
    times: list[float] = []
    seen: set[str] = set()
    position = (float("inf"), "")
    cursor = None
    while True:
        params = {"realm": "bench", "limit": limit, **({"cursor": cursor} if cursor else {})}
        body = json.dumps({"jsonrpc": "2.0", "id": len(times), "method": "mobkit/memory/panel/records",
                           "params": params})
        started = time.perf_counter()
        response = client.post("/console/rpc", body, content_type="application/json")
        result = json.loads(response.content)["result"]
        times.append(time.perf_counter() - started)
        for row in result["records"]:
            key = (row["updated_at_ms"], row["id"])
            assert key < position, "rows out of keyset order"
            assert row["id"] not in seen, "a row came back twice"
            position = key
            seen.add(row["id"])
        cursor = result["next_cursor"]
        if cursor is None:
            return times, len(seen)


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--direct", action="store_true", help="no console realm index: query the realm file")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="mobkit-bench-") as state:
        configure(Path(state), direct=args.direct)
        write_seconds = write_realm(args.records)
        print(f"wrote {args.records:,} records with bulk_apply in {write_seconds:.1f} s")
        if not args.direct:
            from memory_panel.store.realm_index import build

            started = time.perf_counter()
            build("bench")
            print(f"built the console's realm index in {time.perf_counter() - started:.1f} s (not timed below)")
        times, rows = walk(args.limit)
        assert rows == args.records, f"walk saw {rows} rows of {args.records}"
        print(f"walked {len(times):,} pages of {args.limit} ({rows:,} rows, no duplicate, no gap) "
              f"in {sum(times):.1f} s")
        first, last = times[:100], times[-100:]
        for label, sample in (("first 100 pages", first), ("last 100 pages", last)):
            print(f"{label}: median {statistics.median(sample) * 1000:.2f} ms, p95 {p95(sample) * 1000:.2f} ms")
        print(f"ratio last/first: median {statistics.median(last) / statistics.median(first):.2f}, "
              f"p95 {p95(last) / p95(first):.2f}")


if __name__ == "__main__":
    main()
