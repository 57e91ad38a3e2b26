"""One large realm at 1 M, 3 M and 10 M records: the console's indexes from a cold start, against the realm.

    MOBKIT_PERSISTENT_STATE=/tmp/big-3m .venv/bin/python manage.py seed_demo --realm big --no-timeline --records 3000000
    .venv/bin/python bench/records_scale.py /tmp/big-1m /tmp/big-3m /tmp/big-10m --json /tmp/records-scale.json

Each argument is a kept seeded state (``<state>/agent-memory/<realm>.sqlite3``), only ever read: the
console runs over it with a state of its own (``<state>-bench``, ``--work-suffix``), whose
``console/realm-index`` and ``console/search-index`` are deleted first, so every run is a cold start.
For each it starts one daphne on 127.0.0.1 and asks, every half second, for the 90%-deep
``panel/records`` page (limit 50), a search and ``panel/overview`` (which needs the complete realm
index), and prints:

- the realm's records and bytes; the realm index and the search index on disk, and both over the realm;
- seconds from the server's start to the first fast (< 100 ms) deep page, to the first search
  answer, and to the first overview answer (the realm index complete), and the slowest deep-page
  answer meanwhile (a refusal with the build's progress counts: it must come at once);
- the server's peak resident memory (VmHWM) once the builds are done;
- the warm deep page and first page, p50 of ``--reps``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lean_index import Client, deep_cursor, peak_rss_mib, tree_bytes  # noqa: E402 (bench/ is the script's path)
from tests.support.servers import deployment_env, manage, start_daphne, stop_daphne  # noqa: E402

FAST_SECONDS = 0.1
POLL_SECONDS = 0.5


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("states", nargs="+", type=Path, help="kept seeded states, smallest first")
    parser.add_argument("--realm", default="big", help="the realm seeded in each state")
    parser.add_argument("--work-suffix", default="-bench", help="the console's own state: <state><suffix>")
    parser.add_argument("--reps", type=int, default=30, help="warm requests per measurement")
    parser.add_argument("--timeout", type=float, default=3600.0, help="give up on a cold start after this long")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    return parser.parse_args()


def realm_records(realm_file: Path) -> int:
    with sqlite3.connect(f"file:{realm_file}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM records").fetchone()[0]


def cached_deep_cursor(realm_file: Path, work: Path) -> str:
    """The 90%-deep cursor, kept beside the console's state: at 10 M records finding it is a minute's sort."""
    stat = realm_file.stat()
    cache = work / "deep-cursor.json"
    key = [stat.st_ino, stat.st_size, stat.st_mtime_ns]
    if cache.exists():
        kept = json.loads(cache.read_text())
        if kept["key"] == key:
            return kept["cursor"]
    cursor = deep_cursor(realm_file)
    cache.write_text(json.dumps({"key": key, "cursor": cursor}))
    return cursor


def measure(state: Path, args: argparse.Namespace) -> dict:
    state = state.absolute()
    realm_file = state / "agent-memory" / f"{args.realm}.sqlite3"
    work = Path(f"{state}{args.work_suffix}")
    (work / "console").mkdir(parents=True, exist_ok=True)
    for family in ("realm-index", "search-index"):
        shutil.rmtree(work / "console" / family, ignore_errors=True)
    env = deployment_env(work, MOBKIT_AGENT_MEMORY_ROOT=str(state / "agent-memory"))
    manage(env, "migrate", "--noinput")
    token = manage(env, "mobkit_token", "bench@example.test").strip().splitlines()[-1]
    records = realm_records(realm_file)
    realm_bytes = sum(p.stat().st_size for p in realm_file.parent.glob(f"{realm_file.name}*"))
    cursor = cached_deep_cursor(realm_file, work)
    deep = {"realm": args.realm, "limit": 50, "cursor": cursor}
    first = {"realm": args.realm, "limit": 50}
    print(f"{state}: {records:,} records, realm {realm_bytes / 2**30:.2f} GiB", flush=True)

    started = time.monotonic()
    server = start_daphne(env)
    try:
        client = Client(server.port, token)
        fast_at = search_at = complete_at = None
        slowest = 0.0
        while fast_at is None or search_at is None or complete_at is None:
            now = time.monotonic() - started
            if now > args.timeout:
                raise SystemExit(f"{state}: not ready after --timeout {args.timeout:.0f} s")
            if fast_at is None:
                reply, seconds = client.rpc("mobkit/memory/panel/records", deep)
                slowest = max(slowest, seconds)
                if "result" in reply and seconds < FAST_SECONDS:
                    fast_at = time.monotonic() - started
                    print(f"  fast deep page after {fast_at:.1f} s ({seconds * 1000:.1f} ms)", flush=True)
                elif "error" in reply and reply["error"]["code"] != -32020:
                    print(f"  deep page error at {now:.0f} s: {reply['error']['message']}", flush=True)
            if search_at is None:
                reply, _ = client.rpc("mobkit/memory/panel/search", {"realm": args.realm, "query": "oslo"})
                if "result" in reply:
                    search_at = time.monotonic() - started
                    print(f"  search answers after {search_at:.1f} s", flush=True)
            if complete_at is None:
                reply, _ = client.rpc("mobkit/memory/panel/overview", {"realm": args.realm})
                if "result" in reply:
                    complete_at = time.monotonic() - started
                    print(f"  overview (complete realm index) after {complete_at:.1f} s", flush=True)
            time.sleep(POLL_SECONDS)
        time.sleep(5)  # a build's last writes land before the files are counted
        peak = peak_rss_mib(server.process.pid)

        def p50(params: dict) -> float:
            client.rpc("mobkit/memory/panel/records", params)
            return statistics.median(client.rpc("mobkit/memory/panel/records", params)[1] for _ in range(args.reps))

        warm_deep, warm_first = p50(deep), p50(first)
    finally:
        stop_daphne(server)
    realm_index = tree_bytes(work / "console" / "realm-index")
    search_index = tree_bytes(work / "console" / "search-index")
    return {
        "state": str(state),
        "records": records,
        "realm_bytes": realm_bytes,
        "realm_index_bytes": realm_index,
        "search_index_bytes": search_index,
        "index_share": (realm_index + search_index) / realm_bytes,
        "fast_deep_page_seconds": round(fast_at, 1),
        "search_seconds": round(search_at, 1),
        "complete_index_seconds": round(complete_at, 1),
        "slowest_deep_answer_during_build_ms": round(slowest * 1000, 1),
        "peak_rss_mib": round(peak),
        "warm_deep_page_p50_ms": round(warm_deep * 1000, 1),
        "warm_first_page_p50_ms": round(warm_first * 1000, 1),
    }


COLUMNS = (
    ("records", "records", "{:,}"),
    ("realm GiB", "realm_bytes", lambda v: f"{v / 2**30:.2f}"),
    ("realm idx GiB", "realm_index_bytes", lambda v: f"{v / 2**30:.2f}"),
    ("search idx GiB", "search_index_bytes", lambda v: f"{v / 2**30:.2f}"),
    ("idx/realm", "index_share", lambda v: f"{v:.0%}"),
    ("fast deep s", "fast_deep_page_seconds", "{}"),
    ("search s", "search_seconds", "{}"),
    ("complete s", "complete_index_seconds", "{}"),
    ("slowest ms", "slowest_deep_answer_during_build_ms", "{}"),
    ("peak MiB", "peak_rss_mib", "{}"),
    ("deep p50 ms", "warm_deep_page_p50_ms", "{}"),
    ("first p50 ms", "warm_first_page_p50_ms", "{}"),
)


def table(rows: list[dict]) -> str:
    cells = [[name for name, _, _ in COLUMNS]]
    for row in rows:
        cells.append([(fmt.format if isinstance(fmt, str) else fmt)(row[key]) for _, key, fmt in COLUMNS])
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(cell.rjust(width) for cell, width in zip(line, widths)) for line in cells)


def main() -> None:
    args = parse_args()
    rows = []
    for state in args.states:
        rows.append(measure(state, args))
        if args.json:  # kept after each size: a 10 M cold start is long
            args.json.write_text(json.dumps(rows, indent=2))
    print(table(rows))
    if len(rows) > 1:
        base = rows[0]
        for row in rows[1:]:
            ratio = row["warm_deep_page_p50_ms"] / base["warm_deep_page_p50_ms"]
            print(f"{row['records']:,} records: warm deep page {ratio:.1f}x the one at {base['records']:,}")


if __name__ == "__main__":
    main()
