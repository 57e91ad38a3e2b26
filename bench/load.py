"""Load: many clients at once against one server, on loopback only.

Seeds realm ``bench`` with ``seed_demo --records N`` (or, with ``--identities K``, plain notes
over K identity scopes; once per ``--keep`` directory), starts the
console the way an operator would — one ``daphne`` process (``--server daphne``, what
``runserver`` serves too) or ``bin/serve`` with ``--workers`` uvicorn processes — and runs each
``--scenario`` at each ``--clients`` count for ``--seconds``:

- ``holdings``: every client reloads Holdings (``/console/memory/``), the page that reads the most;
- ``records``: every client walks the Records page by its "Load more" links, back to the top after
  ``--pages`` pages;
- ``rpc``: every client calls ``mobkit/capabilities`` (the fixed cost of a JSON-RPC request);
- ``export``: every client downloads ``records.ndjson`` whole, and the longest wait for the next
  byte (the stall) is reported beside the latency;
- ``audit``: every client downloads ``audit.ndjson`` whole (``--audit-entries`` entries, written
  once per state; the bench's token user is made a console admin to read them), stalls reported too;
- ``downloads``: half the clients download ``records.ndjson``, the other half ``audit.ndjson``,
  as the issue's probe did; each path reported on a line of its own;
- ``path``: every client GETs ``--path`` (a deep records page with its cursor, say) again and again.

It prints requests, answers >= 500, requests per second, p50/p99/max latency and the server
processes' CPU time per request (from /proc: what a request costs, however busy the machine) per run, and
exits 1 when any answer was >= 500 or a request failed. ``--with-redis`` gives bin/serve the
machine's Redis (127.0.0.1:6379/9) and ``--database-url`` a console database other than SQLite.

    .venv/bin/python bench/load.py --scenario holdings --clients 1,16 --server daphne
    .venv/bin/python bench/load.py --scenario records --clients 1,8 --server serve --workers 2
    .venv/bin/python bench/load.py --scenario export --clients 10 --server daphne --records 50000
    .venv/bin/python bench/load.py --scenario export,audit,downloads --clients 1,12 --server serve --workers 2 \
        --records 20000 --audit-entries 50000 --seconds 60

Bounded and local: every server binds 127.0.0.1, each run stops after ``--seconds``.
"""

from __future__ import annotations

import argparse
import http.client
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.servers import (  # noqa: E402
    deployment_env,
    manage,
    start_daphne,
    start_serve,
    stop_daphne,
    stop_serve,
)
from tests.support.worlds import write_spread  # noqa: E402

REALM = "bench"
MORE = re.compile(r'id="records-more".*?href="\?([^"]+)"', re.S)
# Run in ``manage.py shell``: the bench's token user made a console admin (audit.ndjson is theirs
# alone, docs/audit-and-oidc.md §3), and the audit log topped up to ``entries`` entries of the
# shapes the console writes, in one transaction.
AUDIT_SEED = """
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from mobkit_console.audit.models import AuditEntry
get_user_model().objects.filter(username="load@example.test").update(is_superuser=True)
have = AuditEntry.objects.count()
now = timezone.now()
AuditEntry.objects.bulk_create([AuditEntry(
    at=now - timedelta(seconds=i), subject=f"agent{{i % 40}}@example.test", sign_in="token", client="127.0.0.1",
    action=("records.search", "quarantine.body.read", "records.export", "access.denied")[i % 4], realm="bench",
    target=f"mem-{{i:08d}}", outcome="ok", detail={{"q": "visa monday", "rows": i % 500, "filters": {{"kind": "note"}}}},
) for i in range(have, {entries})], batch_size=2000)
print(f"audit log: {{AuditEntry.objects.count():,}} entries")
"""
SCENARIOS = ("holdings", "records", "rpc", "export", "audit", "downloads", "path")
EXPORT = f"/console/memory/records.ndjson?realm={REALM}"
AUDIT = "/console/audit.ndjson"


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    stalls: list[float] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, status: int, seconds: float, stall: float = 0.0) -> None:
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.latencies.append(seconds)
            self.stalls.append(stall)


def timed_get(connection: http.client.HTTPConnection, path: str, headers: dict[str, str]) -> tuple[int, bytes, float, float]:
    """One GET read in 64 KiB pieces: status, body, seconds, and the longest wait for a piece."""
    began = last = time.perf_counter()
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    stall = time.perf_counter() - began  # until the headers: the wait for the first byte
    parts = []
    while chunk := response.read(65536):
        now = time.perf_counter()
        stall = max(stall, now - last)
        last = now
        parts.append(chunk)
    return response.status, b"".join(parts), time.perf_counter() - began, stall


def client_loop(port: int, token: str, scenario: str, stop: threading.Event, *, tally: Tally, pages: int,
                fixed_path: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    more: str | None = None
    walked = 0
    while not stop.is_set():
        try:
            if scenario == "rpc":
                began = time.perf_counter()
                connection.request("POST", "/console/rpc", body=b'{"jsonrpc":"2.0","id":1,"method":"mobkit/capabilities"}',
                                   headers={**headers, "Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                tally.add(response.status, time.perf_counter() - began)
                continue
            path = {
                "holdings": f"/console/memory/?realm={REALM}",
                "export": EXPORT,
                "audit": AUDIT,
                "records": f"/console/memory/records/?{more}" if more else f"/console/memory/records/?realm={REALM}",
                "path": fixed_path,
            }[scenario]
            status, body, seconds, stall = timed_get(connection, path, headers)
            tally.add(status, seconds, stall)
            if scenario == "records":
                walked += 1
                found = MORE.search(body.decode("utf-8", "replace"))
                more = found.group(1).replace("&amp;", "&") if found and walked < pages else None
                walked = walked if more else 0
        except Exception as error:  # noqa: BLE001 - every failure is counted and shown
            with tally.lock:
                tally.failed.append(f"{type(error).__name__}: {error}")
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            more = None
    connection.close()


def for_seconds(seconds: float, clients: list[Callable[[threading.Event], None]]) -> float:
    """Each client in a thread of its own until ``seconds`` pass (then its event is set); the time
    the run took, the clients' last requests included."""
    stop = threading.Event()
    threads = [threading.Thread(target=client, args=(stop,), daemon=True) for client in clients]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(timeout=180)
    return time.monotonic() - started


def run(port: int, token: str, scenario: str, clients: int, seconds: float, pages: int,
        fixed_path: str = "") -> dict[str, Tally]:
    """One tally per path the clients asked for: ``downloads`` gives every other client the audit log."""
    if scenario == "downloads":
        tallies = {"records.ndjson": Tally(), "audit.ndjson": Tally()}
        loops = [partial(client_loop, port, token, "path", tally=tallies[name], pages=pages, fixed_path=path)
                 for i in range(clients) for name, path in [(("records.ndjson", EXPORT), ("audit.ndjson", AUDIT))[i % 2]]]
    else:
        tallies = {"": Tally()}
        loops = [partial(client_loop, port, token, scenario, tally=tallies[""], pages=pages, fixed_path=fixed_path)
                 for _ in range(clients)]
    for_seconds(seconds, loops)
    return tallies


def report(label: str, tally: Tally, seconds: float, cpu_s: float, requests: int) -> bool:
    """One line; ``cpu_s`` is the servers' CPU over the run, shared by ``requests`` (every path's)."""
    lat = sorted(tally.latencies) or [0.0]
    bad = sum(count for status, count in tally.statuses.items() if status >= 500)
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    stall = max(tally.stalls, default=0.0)
    print(f"{label:<34} {len(tally.latencies):>6} req {bad:>4} >=500 {len(tally.failed):>3} failed "
          f"{len(tally.latencies) / seconds:>7.1f} req/s  p50 {statistics.median(lat) * 1000:>7.1f} ms  "
          f"p99 {p99 * 1000:>7.1f} ms  max {lat[-1] * 1000:>7.1f} ms  longest stall {stall:>5.2f} s  "
          f"server CPU {cpu_s * 1000 / max(requests, 1):.2f} ms/req", flush=True)
    for failure in tally.failed[:3]:
        print(f"    {failure}")
    return bad == 0 and not tally.failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--identities", type=int, default=0,
                        help="seed plain notes over this many identity scopes instead of the demo story")
    parser.add_argument("--scenario", default="holdings", help=f"comma-separated, of {', '.join(SCENARIOS)}")
    parser.add_argument("--clients", default="1,16", help="comma-separated client counts, each its own run")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--pages", type=int, default=20, help="records: pages walked before starting over")
    parser.add_argument("--path", default="/console/memory/records/", help="the path scenario's URL")
    parser.add_argument("--server", choices=("daphne", "serve"), default="daphne")
    parser.add_argument("--workers", type=int, default=2, help="bin/serve's WORKERS")
    parser.add_argument("--with-redis", action="store_true", help="REDIS_URL=redis://127.0.0.1:6379/9")
    parser.add_argument("--database-url", default="", help="the console database (default: SQLite in the state)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for the server, e.g. MOBKIT_REALM_QUERY_TIMEOUT_MS=250 (repeatable)")
    parser.add_argument("--audit-entries", type=int, default=50_000,
                        help="audit log entries written once per state, for the audit and downloads scenarios")
    parser.add_argument("--keep", type=Path, help="state directory to reuse (the seeded realm survives)")
    args = parser.parse_args()

    state = args.keep or Path(tempfile.mkdtemp(prefix="mobkit-load-"))
    extra = {"REDIS_URL": "redis://127.0.0.1:6379/9"} if args.with_redis else {}
    env = deployment_env(state, **extra)
    if args.database_url:
        env["DATABASE_URL"] = args.database_url
    env.update(setting.split("=", 1) for setting in args.env)
    (state / "console").mkdir(parents=True, exist_ok=True)
    manage(env, "migrate", "--noinput")
    if not (state / "agent-memory" / f"{REALM}.sqlite3").exists():
        began = time.perf_counter()
        if args.identities:
            write_spread(state / "agent-memory", REALM, args.records, args.identities)
        else:
            manage(env, "seed_demo", "--realm", REALM, "--records", str(args.records))
        print(f"seeded {args.records} records in {time.perf_counter() - began:.0f} s", flush=True)
    token = manage(env, "mobkit_token", "load@example.test").strip().splitlines()[-1]
    if {"audit", "downloads"} & set(args.scenario.split(",")):
        print(manage(env, "shell", "-c", AUDIT_SEED.format(entries=args.audit_entries)).strip().splitlines()[-1], flush=True)

    server = start_daphne(env) if args.server == "daphne" else start_serve(env, args.workers)
    port = server.port
    ok = True
    try:
        # One request first, so index builds and caches are not in the figures.
        for scenario in args.scenario.split(","):
            run(port, token, scenario, 1, 2, args.pages, args.path)
            for clients in (int(c) for c in args.clients.split(",")):
                cpu_before = server.cpu_seconds()
                tallies = run(port, token, scenario, clients, args.seconds, args.pages, args.path)
                cpu_s = server.cpu_seconds() - cpu_before
                name = "daphne" if args.server == "daphne" else f"bin/serve x{args.workers}"
                requests = sum(len(tally.latencies) for tally in tallies.values())
                for path, tally in tallies.items():
                    label = f"{scenario}{f' {path}' if path else ''} {clients:>3} clients ({name})"
                    ok &= report(label, tally, args.seconds, cpu_s, requests)
    finally:
        stop_daphne(server) if args.server == "daphne" else stop_serve(server)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
