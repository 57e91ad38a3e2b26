"""The console's own indexes at a million records: their size, a cold start, light use, usage counters.

    .venv/bin/python bench/lean_index.py --keep /tmp/index-state          # a seeded realm, reused
    .venv/bin/python bench/lean_index.py --records 50000                   # seeds a throwaway realm

Starts one daphne the way an operator would (loopback only) over a realm with **no** console index
(``<state>/console/realm-index`` and ``search-index`` are deleted first), and prints:

- seconds from the server's start to the first fast (< 100 ms) 90%-deep ``panel/records`` page,
  and from the first search (sent at start) to the first answer that is not "being built";
- every file under ``<state>/console/`` (both indexes, all generations, WAL files, the console's
  own database) over the realm file's bytes, and the server's peak memory after the builds;
- the server's CPU over ``--light-seconds`` of light use (one request every 2 s: records first
  and deep, Holdings, a search), after a warm-up;
- seconds from a usage counter moved in the realm (as the runtime's ``mark_usage`` does, without
  an audit row: the bench is the runtime here, and only writes its own ``--keep`` copy) to the
  record leading the ``sort=utility`` page with its DEAD flag;
- the Holdings page of a realm of ``--holdings-scopes`` identity scopes (three notes each): its
  bytes and wall time, first and p50 of five.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlencode

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.servers import deployment_env, manage, start_daphne, stop_daphne  # noqa: E402
from tests.support.worlds import write_spread  # noqa: E402

REALM = "default"
FAST_SECONDS = 0.1


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="persistent-state directory holding agent-memory/default.sqlite3")
    parser.add_argument("--records", type=int, default=1_000_000, help="records to seed when the realm is missing")
    parser.add_argument("--light-seconds", type=float, default=60.0, help="the light-use window CPU is measured over")
    parser.add_argument("--timeout", type=float, default=600.0, help="give up waiting for an index after this long")
    parser.add_argument("--keep-index", action="store_true",
                        help="keep the indexes an earlier run built (no cold start measured)")
    parser.add_argument("--holdings-scopes", type=int, default=7600, help="scopes of the wide realm Holdings is timed on")
    return parser.parse_args()


class Client:
    def __init__(self, port: int, token: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.headers = {"Authorization": f"Bearer {token}"}

    def get(self, path: str) -> tuple[str, float]:
        began = time.perf_counter()
        self.connection.request("GET", path, headers=self.headers)
        body = self.connection.getresponse().read().decode("utf-8", "replace")
        return body, time.perf_counter() - began

    def rpc(self, method: str, params: dict) -> tuple[dict, float]:
        began = time.perf_counter()
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        self.connection.request("POST", "/console/rpc", body=body,
                                headers={**self.headers, "Content-Type": "application/json"})
        reply = json.loads(self.connection.getresponse().read())
        return reply, time.perf_counter() - began


def deep_cursor(realm_file: Path) -> str:
    """The cursor of the 90%-deep page, from MobKit's own order (one full sort, before the clock starts)."""
    conn = sqlite3.connect(f"file:{realm_file}?mode=ro", uri=True)
    count = conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    ms, memory_id = conn.execute(
        "SELECT updated_at_ms, memory_id FROM records ORDER BY updated_at_ms DESC, memory_id DESC LIMIT 1 OFFSET ?",
        (int(count * 0.9),),
    ).fetchone()
    conn.close()
    return f"{ms}:{memory_id}"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def tree_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def main() -> None:
    args = parse_args()
    state = args.keep.absolute() if args.keep else Path(tempfile.mkdtemp(prefix="mobkit-lean-index-"))
    env = deployment_env(state)
    realm_file = state / "agent-memory" / f"{REALM}.sqlite3"
    manage(env, "migrate", "--noinput")
    if not realm_file.exists():
        manage(env, "seed_demo", "--realm", REALM, "--records", str(args.records))
    for family in ("realm-index", "search-index") if not args.keep_index else ():
        shutil.rmtree(state / "console" / family, ignore_errors=True)
    for wide in realm_file.parent.glob("wide.sqlite3*"):
        wide.unlink()
    token = manage(env, "mobkit_token", "bench@example.test").strip().splitlines()[-1]
    cursor = deep_cursor(realm_file)
    realm_bytes = sum(p.stat().st_size for p in realm_file.parent.glob(f"{REALM}.sqlite3*"))
    print(f"realm file: {realm_bytes:,} bytes")

    started = time.monotonic()
    server = start_daphne(env)
    try:
        client = Client(server.port, token)
        deep_params = {"realm": REALM, "limit": 50, "cursor": cursor}
        fast_at = search_at = None
        search_sent = time.monotonic()
        while fast_at is None or search_at is None:
            if time.monotonic() - started > args.timeout:
                raise SystemExit("no fast pages before --timeout")
            if fast_at is None:
                reply, seconds = client.rpc("mobkit/memory/panel/records", deep_params)
                # Before the index, the direct read may run past the query time limit: not fast either.
                if "result" in reply and seconds < FAST_SECONDS:
                    fast_at = time.monotonic() - started
                    print(f"cold start → fast 90%-deep records page: {fast_at:.1f} s ({seconds * 1000:.1f} ms)")
            if search_at is None:
                reply, seconds = client.rpc("mobkit/memory/panel/search", {"realm": REALM, "query": "oslo"})
                if "result" in reply:
                    search_at = time.monotonic() - search_sent
                    print(f"first search → search answers: {search_at:.1f} s ({seconds * 1000:.1f} ms)")
                else:
                    assert "building its search index" in json.dumps(reply), reply
            time.sleep(1)
        time.sleep(5)  # let a build's last writes land before the files are counted
        print(f"server peak memory (VmHWM) after the builds: {peak_rss_mib(server.process.pid):,.0f} MiB")
        console_bytes = tree_bytes(state / "console")
        for family in ("realm-index", "search-index"):
            print(f"  {family}: {tree_bytes(state / 'console' / family):,} bytes")
        print(f"every file under console/: {console_bytes:,} bytes = {console_bytes / realm_bytes:.0%} of the realm")

        light = [
            lambda: client.get(f"/console/memory/records/?realm={REALM}"),
            lambda: client.rpc("mobkit/memory/panel/records", deep_params),
            lambda: client.get(f"/console/memory/?realm={REALM}"),
            lambda: client.get(f"/console/memory/records/?realm={REALM}&q=oslo"),
        ]

        def light_use(seconds: float) -> None:
            until = time.monotonic() + seconds
            n = 0
            while time.monotonic() < until:
                light[n % len(light)]()
                n += 1
                time.sleep(2)

        light_use(30)  # warm-up: the first look at the usage counters in this process scans them once
        before = cpu_seconds(server.process.pid)
        window = time.monotonic()
        light_use(args.light_seconds)
        used = cpu_seconds(server.process.pid) - before
        elapsed = time.monotonic() - window
        print(f"light use: {used:.2f} s CPU in {elapsed:.0f} s = {used / elapsed:.1%} of a core")

        writer = sqlite3.connect(realm_file, timeout=30)
        # A record never injected: last in the utility order until its counters move.
        memory_id = writer.execute(
            "SELECT memory_id FROM records WHERE status_kind = 'active'"
            " AND COALESCE(json_extract(usage_stats, '$.injected_count'), 0) = 0 ORDER BY rowid DESC LIMIT 1"
        ).fetchone()[0]
        page, _ = client.get(f"/console/memory/records/?realm={REALM}&sort=utility&limit=5")
        assert memory_id not in page and quote(memory_id) not in page
        with writer:  # what mark_usage leaves: counters moved, no audit row; so many bytes spent it leads
            writer.execute(
                "UPDATE records SET usage_stats = ? WHERE memory_id = ?",
                (json.dumps({"injected_count": 10**9, "judged_useful_count": 0}), memory_id),
            )
        writer.close()
        moved = time.monotonic()
        while True:
            page, _ = client.get(f"/console/memory/records/?realm={REALM}&sort=utility&limit=5")
            if quote(memory_id) in page or memory_id in page:
                print(f"usage counter moved → leads the utility order: {time.monotonic() - moved:.1f} s")
                break
            if time.monotonic() - moved > 180:
                print("usage counter moved → not in the utility order after 180 s")
                break
            light_use(2)

        write_spread(realm_file.parent, "wide", args.holdings_scopes * 3, args.holdings_scopes)
        client.get("/console/memory/?realm=wide")  # starts its indexes; timed once they are built
        until = time.monotonic() + args.timeout
        while time.monotonic() < until and not all(
            list((state / "console" / family / "wide").glob("gen-*.sqlite3")) for family in ("realm-index", "search-index")
        ):
            time.sleep(1)
        timings = []
        for _ in range(6):
            page, seconds = client.get("/console/memory/?realm=wide")
            timings.append(seconds)
        print(f"Holdings, {args.holdings_scopes:,} scopes: {len(page.encode()):,} bytes, first {timings[0] * 1000:.0f} ms,"
              f" p50 {statistics.median(timings[1:]) * 1000:.0f} ms")
    finally:
        stop_daphne(server)
    print(f"query: {urlencode(deep_params)}")


if __name__ == "__main__":
    main()
