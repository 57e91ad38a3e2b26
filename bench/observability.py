"""What metrics and JSON logs cost the records page under bin/serve, and what a scrape costs.

    .venv/bin/python bench/observability.py [--records 2000] [--reps 500] [--realms 500]

Seeds one realm (``--records`` notes over 20 identities) in a throwaway state, then starts two
``bin/serve`` (one worker each) side by side: one with metrics and JSON logs off (``METRICS_PORT=0``,
``LOG_FORMAT=console``), one with them on (a metrics port, ``LOG_FORMAT=json``). After a warm-up it
asks each in turn, ``--reps`` times, for ``/console/memory/records/?realm=default`` on a keep-alive
connection, so whatever else the machine does falls on both alike, and prints each one's p50 and
mean and its worker's CPU time per request (/proc).

With ``--realms N`` it also writes N more small realms (20 records each, one quarantined) and
times the metrics process's first scrape (every realm read once) and the next (realms unchanged).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lean_index import Client  # noqa: E402 (bench/ is the script's path)
from memory_panel.simulator.store_writer import StoreWriter, agent, identity_scope  # noqa: E402
from tests.support.metrics import scrape_text  # noqa: E402
from tests.support.servers import cpu_seconds, deployment_env, free_port, manage, start_serve, stop_serve  # noqa: E402
from tests.support.worlds import write_spread  # noqa: E402
from tests.support.written import TAINT  # noqa: E402

PAGE = "/console/memory/records/?realm=default"
WARM_UP = 20


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--realms", type=int, default=0, help="also time scrapes over this many more realms")
    return parser.parse_args()


def timed_side_by_side(modes: dict[str, dict[str, str]], token: str, reps: int) -> dict[str, dict[str, float]]:
    servers = {mode: start_serve(env, 1) for mode, env in modes.items()}
    try:
        clients = {mode: Client(server.port, token) for mode, server in servers.items()}
        workers = {mode: next(iter(server.worker_pids())) for mode, server in servers.items()}
        for _ in range(WARM_UP):
            for client in clients.values():
                client.get(PAGE)
        cpu_before = {mode: cpu_seconds(pid) for mode, pid in workers.items()}
        times: dict[str, list[float]] = {mode: [] for mode in modes}
        for n in range(reps):
            order = list(modes) if n % 2 else list(reversed(modes))
            for mode in order:
                times[mode].append(clients[mode].get(PAGE)[1])
        cpu = {mode: (cpu_seconds(pid) - cpu_before[mode]) / reps for mode, pid in workers.items()}
    finally:
        for server in servers.values():
            stop_serve(server)
    return {mode: {"p50_ms": statistics.median(times[mode]) * 1000, "mean_ms": statistics.fmean(times[mode]) * 1000,
                   "cpu_ms": cpu[mode] * 1000} for mode in modes}


def write_small_realms(root: Path, count: int) -> None:
    for n in range(count):
        name = f"small-{n:04d}"
        with StoreWriter.create(name, root=root) as writer:
            scope = identity_scope(name, "identity:agent")
            for i in range(19):
                writer.remember(scope, f"Note {i}", f"Body {i}")
            writer.remember(scope, "Wire it", "Tainted", author=agent("identity:agent"), gate_reason=TAINT)


def scrape_seconds(env: dict[str, str], port: int) -> tuple[float, float]:
    server = start_serve(env, 1)
    try:
        timings = []
        for _ in range(2):
            began = time.perf_counter()
            scrape_text(port)
            timings.append(time.perf_counter() - began)
    finally:
        stop_serve(server)
    return timings[0], timings[1]


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="mobkit-observability-") as scratch:
        state = Path(scratch) / "state"
        (state / "console").mkdir(parents=True)
        write_spread(state / "agent-memory", "default", records=args.records, identities=20)
        base = deployment_env(state, DJANGO_SECRET_KEY="bench-observability-key")
        manage(base, "migrate", "--noinput")
        token = manage(base, "mobkit_token", "bench@example.test").strip().splitlines()[-1]
        metrics_port = free_port()
        modes = {
            "off": {**base, "METRICS_PORT": "0", "LOG_FORMAT": "console"},
            "on": {**base, "METRICS_PORT": str(metrics_port), "LOG_FORMAT": "json"},
        }
        summary = timed_side_by_side(modes, token, args.reps)
        print(f"records page, {args.records} records, {args.reps} requests to each of two servers, one worker each")
        for mode, figures in summary.items():
            print(f"  metrics+json logs {mode:>3}: p50 {figures['p50_ms']:.2f} ms  mean {figures['mean_ms']:.2f} ms"
                  f"  worker CPU {figures['cpu_ms']:.2f} ms/request")
        for key in ("p50_ms", "mean_ms", "cpu_ms"):
            change = (summary["on"][key] / summary["off"][key] - 1) * 100
            print(f"  {key}: {change:+.1f}% with metrics and JSON logs on")

        if args.realms:
            write_small_realms(state / "agent-memory", args.realms)
            first, again = scrape_seconds(modes["on"], metrics_port)
            print(f"scrape over {args.realms + 1} realms: first {first * 1000:.0f} ms, next {again * 1000:.0f} ms")


if __name__ == "__main__":
    main()
