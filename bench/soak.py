"""Soak: clients walk records over RPC and HTML while a store writer commits, on loopback only.

Seeds realm ``bench`` with the store writer, serves it with one ``daphne`` (the production server,
which also follows the realm for the timeline), then runs ``--clients`` threads that each walk the
records newest first, up to ``--pages`` pages of ``--limit``, alternating the RPC
(``mobkit/memory/panel/records``, following ``next_cursor``) and the HTML page (following the
"Load more" link). First ``--idle-seconds`` with no writer, then ``--seconds`` while a writer
process commits ``--write-rate`` batches a second (remember, supersede, forget). It reports
requests, errors, throughput and p50/p99/max latency for both phases, and checks every walk:
no row twice, strictly newest first, and every row that existed when the walk began is returned
unless a write moved it meanwhile (the writer logs every row each batch changes).

    .venv/bin/python bench/soak.py [--records 30000] [--clients 30] [--seconds 60] [--write-rate 16]

Bounded and local: everything binds 127.0.0.1 and lives in a throwaway directory.
"""

from __future__ import annotations

import argparse
import html
import http.client
import json
import multiprocessing
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import parse_qs, urlencode

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from memory_panel.simulator.store_writer import (  # noqa: E402
    StoreWriter,
    identity_scope,
)
from bench.load import for_seconds  # noqa: E402
from tests.support.servers import daphne_servers, deployment_env, manage  # noqa: E402
from tests.support.worlds import write_spread  # noqa: E402

REALM = "bench"
IDENTITIES = 40
ROW_ID = re.compile(r'data-memory-id="([^"]+)"')
MORE = re.compile(r'id="records-more".*?href="\?([^"]+)"', re.S)

Key = tuple[int, str]


def all_keys(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT memory_id, updated_at_ms FROM records"))
    finally:
        conn.close()


def writer_process(root: str, seconds: float, rate: float, log) -> None:
    """Commit ``rate`` batches a second for ``seconds``; log (commit time, {id: updated_at_ms})."""
    rng = random.Random(7)
    with StoreWriter.open(REALM, root=Path(root)) as writer:
        live = [row[0] for row in writer.conn.execute(
            "SELECT memory_id FROM records WHERE status_kind = 'active' ORDER BY random() LIMIT 5000")]
        started = time.monotonic()
        n = 0
        while (elapsed := time.monotonic() - started) < seconds:
            n += 1
            roll = rng.random()
            if roll < 0.5 or not live:
                scope = identity_scope(REALM, f"identity:agent-{rng.randrange(IDENTITIES):02d}")
                touched = [writer.remember(scope, f"Soak {n}", f"written during the soak, batch {n}")]
                live.append(touched[0])
            elif roll < 0.85:
                prior = live.pop(rng.randrange(len(live)))
                touched = [prior, writer.supersede(prior, f"Soak update {n}", f"superseded in batch {n}")]
                live.append(touched[1])
            else:
                prior = live.pop(rng.randrange(len(live)))
                writer.forget(prior)
                touched = [prior]
            keys = dict(writer.conn.execute(
                f"SELECT memory_id, updated_at_ms FROM records WHERE memory_id IN ({', '.join('?' * len(touched))})",
                touched))
            log.put((time.time(), keys))
            if rate > 0:
                time.sleep(max(0.0, n / rate - (time.monotonic() - started)))
    log.put(None)


@dataclass
class Walk:
    kind: str
    started: float
    ended: float = 0.0
    rows: list[Key] = field(default_factory=list)
    complete: bool = False  # reached the end of the records (else stopped at --pages)


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    walks: list[Walk] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def client_loop(port: int, token: str, stop: threading.Event, *, tally: Tally, index: int, args) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Authorization": f"Bearer {token}"}
    kinds = ("rpc", "html")
    turn = index
    while not stop.is_set():
        walk = Walk(kinds[turn % 2], time.time())
        turn += 1
        cursor: str | None = None
        for _ in range(args.pages):
            began = time.perf_counter()
            try:
                rows, cursor = (rpc_page if walk.kind == "rpc" else html_page)(connection, headers, cursor, args.limit)
            except Exception as error:  # noqa: BLE001 - every failure is counted and shown
                with tally.lock:
                    tally.errors.append(f"{walk.kind}: {error!r}"[:300])
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                walk = None
                break
            with tally.lock:
                tally.latencies.append(time.perf_counter() - began)
            walk.rows += rows
            if cursor is None:
                walk.complete = True
                break
            if stop.is_set():
                break
        if walk is not None:
            walk.ended = time.time()
            with tally.lock:
                tally.walks.append(walk)


def _get(connection, method: str, path: str, headers: dict, body: bytes | None = None) -> bytes:
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status} {path}: {data[:200]!r}")
    return data


def rpc_page(connection, headers, cursor, limit) -> tuple[list[Key], str | None]:
    params = {"realm": REALM, "limit": limit, **({"cursor": cursor} if cursor else {})}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "mobkit/memory/panel/records", "params": params})
    reply = json.loads(_get(connection, "POST", "/console/rpc", {**headers, "Content-Type": "application/json"},
                            body.encode()))
    if "error" in reply:
        raise RuntimeError(f"RPC error {reply['error']}")
    result = reply["result"]
    return [(row["updated_at_ms"], row["id"]) for row in result["records"]], result["next_cursor"]


def html_page(connection, headers, cursor, limit) -> tuple[list[Key], str | None]:
    query = {"realm": REALM, "limit": limit, **({"cursor": cursor} if cursor else {})}
    page = _get(connection, "GET", f"/console/memory/records/?{urlencode(query)}", headers).decode()
    ids = [html.unescape(m) for m in ROW_ID.findall(page)]
    more = MORE.search(page)
    next_cursor = parse_qs(html.unescape(more.group(1)))["cursor"][0] if more else None
    # The page shows ages, not timestamps: the cursor of the next page carries the last key, and
    # the checker below looks keys up from the writer's log and the initial snapshot.
    return [(-1, memory_id) for memory_id in ids], next_cursor


def check_walks(walks: list[Walk], initial: dict[str, int], log: list[tuple[float, dict[str, int]]],
                slack: float = 0.5) -> tuple[int, list[str]]:
    """(rows checked, problems): each walk's rows once, in order, and none missing unless moved."""
    problems: list[str] = []
    checked = 0
    for walk in walks:
        ids = [memory_id for _, memory_id in walk.rows]
        if len(ids) != len(set(ids)):
            problems.append(f"{walk.kind} walk returned a row twice")
        state = dict(initial)
        touched: set[str] = set()
        for at, keys in log:
            if at < walk.started - slack:
                state.update(keys)
            elif at <= walk.ended + slack:
                touched |= keys.keys()
        if walk.kind == "rpc":
            keys = walk.rows  # (updated_at_ms, memory_id) as returned
            disorder = [(a, b) for a, b in zip(keys, keys[1:]) if a <= b]
            if disorder:
                problems.append(f"rpc walk out of newest-first order, e.g. {disorder[0]}")
        # The walk covered everything down to its last row that was in place (unmoved) when it began.
        in_place = [(state[m], m) for m in ids if m in state and m not in touched]
        if not in_place:
            continue
        bottom = (-1, "") if walk.complete else min(in_place)
        expected = {m for m, key_ms in state.items() if (key_ms, m) >= bottom} - touched
        missing = expected - set(ids)
        checked += len(expected)
        if missing:
            problems.append(f"{walk.kind} walk missed {len(missing)} rows no write moved, e.g. {sorted(missing)[:3]}")
    return checked, problems


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def run_phase(port: int, token: str, args, seconds: float) -> tuple[Tally, float]:
    tally = Tally()
    took = for_seconds(seconds, [partial(client_loop, port, token, tally=tally, index=i, args=args)
                                 for i in range(args.clients)])
    return tally, took


def report(label: str, tally: Tally, took: float) -> None:
    ms = sorted(t * 1000 for t in tally.latencies)
    print(f"{label}: {len(ms):,} requests in {took:.0f} s = {len(ms) / took:.1f} req/s, "
          f"{len(tally.errors)} errors, p50 {percentile(ms, 50):.0f} ms, p99 {percentile(ms, 99):.0f} ms, "
          f"max {ms[-1]:.0f} ms, {len(tally.walks)} walks")
    for error in tally.errors[:5]:
        print(f"  error: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=30_000)
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--idle-seconds", type=float, default=20)
    parser.add_argument("--write-rate", type=float, default=16, help="writer batches per second (0: flat out)")
    parser.add_argument("--pages", type=int, default=20, help="pages per walk")
    parser.add_argument("--limit", type=int, default=50)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="mobkit-soak-") as scratch:
        state = Path(scratch) / "state"
        root = state / "agent-memory"
        (state / "console").mkdir(parents=True)
        env = deployment_env(state)
        manage(env, "migrate", "--noinput")
        token = manage(env, "mobkit_token", "soak@example.test").strip().splitlines()[-1]
        write_spread(root, REALM, args.records, IDENTITIES)
        realm_file = root / f"{REALM}.sqlite3"
        print(f"seeded {args.records:,} records; {args.clients} clients, walks of up to {args.pages} pages of {args.limit}")
        with daphne_servers(env, 1) as (server,):
            warm = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
            rpc_page(warm, {"Authorization": f"Bearer {token}"}, None, args.limit)
            deadline = time.monotonic() + 300
            while not list((state / "console" / "realm-index").glob("*/gen-*.sqlite3")):
                if time.monotonic() > deadline:
                    raise SystemExit("the realm index was not built within 300 s")
                time.sleep(0.5)
            idle, idle_took = run_phase(server.port, token, args, args.idle_seconds)
            report("no writer", idle, idle_took)

            initial = all_keys(realm_file)
            log = multiprocessing.Queue()
            writer = multiprocessing.Process(target=writer_process, args=(str(root), args.seconds, args.write_rate, log))
            writer.start()
            busy, busy_took = run_phase(server.port, token, args, args.seconds)
            entries = []
            while (entry := log.get(timeout=60)) is not None:
                entries.append(entry)
            writer.join()
            report("with writer", busy, busy_took)
            print(f"writer: {len(entries)} batches in {args.seconds:.0f} s = {len(entries) / args.seconds:.1f}/s")
            ratio = (len(busy.latencies) / busy_took) / (len(idle.latencies) / idle_took)
            print(f"throughput with the writer / without: {ratio:.2f}")

            checked, problems = check_walks(busy.walks + idle.walks, initial, entries)
            print(f"walk check: {checked:,} expected rows over {len(busy.walks) + len(idle.walks)} walks, "
                  f"{len(problems)} problems")
            kinds = Counter(problem.split(", e.g.")[0] for problem in problems)
            for kind, count in kinds.most_common():
                example = next(problem for problem in problems if problem.startswith(kind))
                print(f"  {count} x {example}")
        if problems or idle.errors or busy.errors:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
