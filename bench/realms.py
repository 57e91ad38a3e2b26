"""All-realm pages against the number of realms: N realms of 2,000 records beside one realm of N × 2,000.

    .venv/bin/python bench/realms.py --realms 10 100 --keep /tmp/realms-bench      # seeded once, reused
    .venv/bin/python bench/realms.py --realms 500 --keep /tmp/realms-bench --json /tmp/realms-500.json
    .venv/bin/python bench/realms.py --realms 20 --records-per-realm 500 --reps 3 --idle-seconds 5   # a quick look

For each N, two persistent states (under ``--keep DIR``, else throwaway): ``realms-<N>x<R>`` holds N
realms ``realm-0001``… of R records, written in this one process through the store writer as
``seed_demo --records R`` writes its main realm (generated notes and the demo's story, with its scopes,
supersedes, quarantined records and three dream runs), each realm's clock starting a millisecond
after the last one's, so the realms' records interleave over the same four months rather than follow
one another; ``one-<N·R>-<N>-stories`` holds one realm ``one`` of the same total, written the same
way but telling the story N times (each telling over the same weeks, a millisecond apart), so both
states hold the same queue, proposals and dream runs and a page shows the same rows on both. A state
is seeded once (``seeded.json`` marks it done) and reused as it is, its console indexes included.

Each state is served by one daphne (loopback only, started and stopped by the bench, one at a time).
Its first ``panel/records`` call after start is timed cold; every call is then repeated until it
answers (a search index being built, a realm index still missing), the console's index builds are
waited out, each call is made ``--warmup`` more times, then timed ``--reps`` times. A bearer token
carries no session, so a page asked without ``realm`` shows all realms (docs/daily-use.md §3); the
one-realm state is asked with ``realm=one``. Printed per N: p50 per call on both states and their
ratio, the server's CPU per call on both (steadier than the p50 on a shared machine) and its ratio,
the bytes of each page, the server's open file descriptors and resident memory after the
calls, and its CPU over ``--idle-seconds`` with no request. ``--json FILE`` writes the same figures.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from memory_panel.simulator.demo.cast import DAY_MS  # noqa: E402
from memory_panel.simulator.demo.marker import mark_demo_realm  # noqa: E402
from memory_panel.simulator.demo.padding import pad  # noqa: E402
from memory_panel.simulator.demo.seed import STORY_SPAN_DAYS, seed_demo  # noqa: E402
from memory_panel.simulator.demo.story import write_story  # noqa: E402
from memory_panel.simulator.store_writer import ManualClock, StoreWriter, wall_clock_ms  # noqa: E402
from tests.support.servers import cpu_seconds, deployment_env, manage, start_daphne, stop_daphne  # noqa: E402

ONE_REALM = "one"
LIMIT = 50
PAGE = 5
SEARCH_WORD = "oslo"
RPC = "mobkit/memory/panel/"
# The console's own index families (docs/realm-index.md §2), waited for before anything is timed;
# a realm gets them in the background from this many records (MOBKIT_REALM_INDEX_MIN_ROWS's default).
INDEX_FAMILIES = ("realm-index", "search-index")
INDEXED_FROM_RECORDS = 20_000


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realms", type=int, nargs="+", action="extend", required=True,
                        help="numbers of realms to measure, e.g. --realms 10 100 500 (repeatable)")
    parser.add_argument("--records-per-realm", type=int, default=2000, help="records in each of the N realms")
    parser.add_argument("--keep", type=Path, help="directory for the seeded states, reused between runs")
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions per call")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls after a call first answers")
    parser.add_argument("--idle-seconds", type=float, default=30.0, help="window the idle CPU is measured over")
    parser.add_argument("--timeout", type=float, default=1800.0, help="give up waiting for answers or builds")
    parser.add_argument("--json", type=Path, help="write the figures here")
    return parser.parse_args()


# ---------------------------------------------------------------------------------------------
# The states, seeded once


@dataclass
class State:
    path: Path
    seed_seconds: float
    reused: bool


def seeded_state(path: Path, realms: list[str], records_each: int, stories_each: int = 1) -> State:
    """``path`` holding ``realms`` of ``records_each`` records, each telling the demo's story
    ``stories_each`` times: read from its marker, or written now."""
    marker = path / "seeded.json"
    shape = {"realms": len(realms), "records_each": records_each, "stories_each": stories_each}
    if marker.exists():
        seeded = json.loads(marker.read_text())
        if {key: seeded.get(key, 1) for key in shape} == shape:
            return State(path, seeded["seconds"], reused=True)
    # A state without its marker was cut short: start it again, the console's files with it.
    shutil.rmtree(path, ignore_errors=True)
    root = path / "agent-memory"
    started = time.monotonic()
    story = story_records()
    # Every realm's story spans the same four weeks (and its notes the months before), one
    # millisecond later than the last realm's: the realms' records interleave in time.
    first_ms = wall_clock_ms() - STORY_SPAN_DAYS * DAY_MS
    for n, realm in enumerate(realms):
        tellings = range(stories_each) if len(realms) == 1 else range(n, n + 1)
        seed_realm(root, realm, records_each, start_ms=first_ms + n, story=story, tellings=tellings)
        if (n + 1) % 100 == 0:
            print(f"  seeded {n + 1:,} of {len(realms):,} realms ({time.monotonic() - started:.0f} s)", flush=True)
    seconds = time.monotonic() - started
    marker.write_text(json.dumps({**shape, "seconds": seconds}))
    return State(path, seconds, reused=False)


def story_records() -> int:
    """How many records the demo's story writes; generated notes make up the rest of a realm."""
    with tempfile.TemporaryDirectory() as scratch:
        return seed_demo(root=Path(scratch), realm="story", second_realm=None).records["story"]


def seed_realm(root: Path, realm: str, records: int, *, start_ms: int, story: int, tellings: range) -> None:
    """What ``seed_demo --records`` writes in the main realm, but the notes first and the story
    last: the Dreams page reads a realm's newest 5,000 audit rows (docs/store-format.md §5.4), and
    written the other way round a realm past that size would show no dream runs at all.

    The story is told once for each of ``tellings``, each telling over the same weeks a millisecond
    after the last, its titles marked with its number (see ``TellingWriter``)."""
    clock = ManualClock(start_ms)
    with TellingWriter.create(realm, root=root, clock=clock) as writer:
        mark_demo_realm(writer)
        pad(writer, clock, records - story * len(tellings), None)
        for telling in tellings:
            clock.set(start_ms + telling)
            writer.mark = f" · {telling + 1}"
            write_story(writer, clock)


class TellingWriter(StoreWriter):
    """The store writer with every title of the story marked with its telling's number.

    Told twice in one realm, the same story would not be written twice: MobKit's remember returns
    the record already holding the same content in the scope, and refuses content tombstoned in the
    last 7 days (docs/store-format.md §7.1). Marked, the N tellings of the one realm are N contents,
    as N realms' are; the N realms are marked the same way, so both states' titles are as long.
    """

    mark = ""

    def remember(self, scope: dict[str, Any], title: str, body: str, **options: Any) -> str:
        return super().remember(scope, title + self.mark, body, **options)

    def supersede(self, prior_id: str, title: str, body: str, **options: Any) -> str:
        return super().supersede(prior_id, title + self.mark, body, **options)

    def propose(self, scope: dict[str, Any], record: dict[str, Any], **options: Any) -> str:
        return super().propose(scope, self._marked(record), **options)

    def steward_batch(self, run_id: str, ops: Any, **options: Any) -> Any:
        return super().steward_batch(run_id, [{**op, "record": self._marked(op["record"])} if "record" in op else op
                                              for op in ops], **options)

    def _marked(self, record: dict[str, Any]) -> dict[str, Any]:
        return {**record, "title": record["title"] + self.mark}


def realm_names(count: int) -> list[str]:
    return [f"realm-{n:04d}" for n in range(1, count + 1)]


# ---------------------------------------------------------------------------------------------
# Requests


@dataclass
class Answer:
    seconds: float
    size: int
    error: str | None  # a JSON-RPC error or an HTTP status other than 200
    body: Any = None  # the JSON-RPC result


class Client:
    def __init__(self, port: int, token: str, timeout: float) -> None:
        self.port, self.timeout = port, timeout
        self.headers = {"Authorization": f"Bearer {token}"}

    def _send(self, method: str, path: str, body: str | None, headers: dict[str, str]) -> tuple[int, bytes, float]:
        # One connection a request: a slow answer the server gave up on never poisons the next.
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            began = time.perf_counter()
            connection.request(method, path, body=body, headers={**self.headers, **headers})
            response = connection.getresponse()
            data = response.read()
            return response.status, data, time.perf_counter() - began
        finally:
            connection.close()

    def page(self, path: str, params: dict[str, str]) -> Answer:
        status, data, seconds = self._send("GET", f"{path}?{urlencode(params)}" if params else path, None, {})
        return Answer(seconds, len(data), None if status == 200 else f"HTTP {status}")

    def rpc(self, method: str, params: dict[str, Any]) -> Answer:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        status, data, seconds = self._send("POST", "/console/rpc", body, {"Content-Type": "application/json"})
        if status != 200:
            return Answer(seconds, len(data), f"HTTP {status}")
        reply = json.loads(data)
        if "error" in reply:
            error = reply["error"]
            return Answer(seconds, len(data), f"{error.get('code')} {error.get('message', '')[:80]}")
        return Answer(seconds, len(data), None, reply["result"])


@dataclass(frozen=True)
class Call:
    name: str
    kind: str  # "rpc" or "page"
    target: str  # the method or the path
    params: dict[str, Any]
    deep: bool = False  # asked with the cursor of page 5

    def send(self, client: Client, realm: str | None, cursor: str | None = None) -> Answer:
        params = dict(self.params)
        if realm is not None:
            params["realm"] = realm
        if self.deep:
            params["cursor"] = cursor
        if self.kind == "rpc":
            return client.rpc(self.target, params)
        return client.page(self.target, params)


CALLS = (
    Call("rpc records, first page", "rpc", RPC + "records", {"limit": LIMIT}),
    Call("rpc records, page 5", "rpc", RPC + "records", {"limit": LIMIT}, deep=True),
    Call("rpc overview", "rpc", RPC + "overview", {}),
    Call("rpc search", "rpc", RPC + "search", {"query": SEARCH_WORD}),
    Call("Records page", "page", "/console/memory/records/", {}),
    Call("Holdings page", "page", "/console/memory/", {}),
    Call("Dreams page", "page", "/console/memory/dreams/", {}),
    Call("Pipeline page", "page", "/console/memory/pipeline/", {}),
    Call("Quarantine page", "page", "/console/memory/quarantine/", {}),
    Call("Knowledge page", "page", "/console/memory/knowledge/", {}),
    Call("Records page, search", "page", "/console/memory/records/", {"q": SEARCH_WORD}),
)


@dataclass
class Timing:
    samples: list[float] = field(default_factory=list)  # ms
    # The server's CPU per call (user + system, over the timed calls): unlike the wall-clock p50,
    # it barely moves when other work shares the machine.
    cpu_ms: float = 0.0
    size: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def p50(self) -> float:
        return statistics.median(self.samples)

    def as_json(self) -> dict[str, Any]:
        return {"p50_ms": round(self.p50, 1), "cpu_ms": round(self.cpu_ms, 1),
                "samples_ms": [round(s, 1) for s in self.samples],
                "bytes": self.size, "errors": self.errors}


# ---------------------------------------------------------------------------------------------
# One server over one state


def walk_to_page(client: Client, realm: str | None, page: int) -> tuple[str, int]:
    """The cursor that asks for ``page`` of the records order, followed from the first page, and
    how many realms the rows before it came from (the realms' records interleave: many)."""
    params: dict[str, Any] = {"limit": LIMIT, **({"realm": realm} if realm else {})}
    cursor, realms = None, set()
    for _ in range(page - 1):
        answer = client.rpc(RPC + "records", {**params, **({"cursor": cursor} if cursor else {})})
        if answer.error:
            raise RuntimeError(f"following the records pages: {answer.error}")
        realms.update(record["scope"]["realm"] for record in answer.body["records"])
        cursor = answer.body["next_cursor"]
    return cursor, len(realms)


def until_answered(call: Call, client: Client, realm: str | None, cursor: str | None, deadline: float) -> None:
    while True:
        answer = call.send(client, realm, cursor)
        if answer.error is None:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{call.name}: still {answer.error} at --timeout")
        time.sleep(1)


def builds_settled(state: Path, indexed: list[str]) -> bool:
    """No generation being written, and the realms expected to have indexes have them."""
    console = state / "console"
    if any(console.glob("*/*/*.partial")):
        return False
    return all(list((console / family / realm).glob("gen-*.sqlite3")) for family in INDEX_FAMILIES for realm in indexed)


def proc_status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    return 0


def measure(state: State, realm: str | None, indexed: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """Serve ``state`` with one daphne and time every call, asked for ``realm`` (None: all realms)."""
    env = deployment_env(state.path)
    manage(env, "migrate", "--noinput")
    token = manage(env, "mobkit_token", "realms-bench@example.test").strip().splitlines()[-1]
    had_indexes = any(any((state.path / "console" / family).glob("*/gen-*.sqlite3")) for family in INDEX_FAMILIES)
    server = start_daphne(env)
    pid = server.process.pid
    try:
        client = Client(server.port, token, args.timeout)
        cold = CALLS[0].send(client, realm)
        deadline = time.monotonic() + args.timeout
        for call in CALLS:
            if not call.deep:  # page 5's cursor is followed once the first pages answer
                until_answered(call, client, realm, None, deadline)
        while not builds_settled(state.path, indexed):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the console's indexes of {state.path} were not built by --timeout")
            time.sleep(1)
        cursor, realms_seen = walk_to_page(client, realm, PAGE)
        timings: dict[str, Timing] = {}
        for call in CALLS:
            for _ in range(args.warmup):
                call.send(client, realm, cursor)
            timing = timings[call.name] = Timing()
            cpu_before = cpu_seconds(pid)
            for _ in range(args.reps):
                answer = call.send(client, realm, cursor)
                timing.samples.append(answer.seconds * 1000)
                timing.size = answer.size
                if answer.error:
                    timing.errors.append(answer.error)
            timing.cpu_ms = (cpu_seconds(pid) - cpu_before) * 1000 / args.reps
            print(f"    {call.name}: p50 {timing.p50:,.1f} ms, server CPU {timing.cpu_ms:,.1f} ms"
                  f"{'  ' + timing.errors[0] if timing.errors else ''}", flush=True)
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        rss_kib, peak_kib = proc_status(pid, "VmRSS"), proc_status(pid, "VmHWM")
        before, began = cpu_seconds(pid), time.monotonic()
        time.sleep(args.idle_seconds)
        idle = (cpu_seconds(pid) - before) / (time.monotonic() - began)
    finally:
        stop_daphne(server)
    return {
        "first_call_after_start_ms": round(cold.seconds * 1000, 1),
        "first_call_error": cold.error,
        "console_indexes_on_disk_at_start": had_indexes,
        "realms_before_page_5": realms_seen,
        "calls": {name: timing.as_json() for name, timing in timings.items()},
        "open_fds": fds,
        "rss_mib": round(rss_kib / 1024, 1),
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "idle_cpu_of_a_core": round(idle, 4),
    }


# ---------------------------------------------------------------------------------------------
# Report


def ms(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def ratio(many: float, one: float) -> str:
    return f"x{many / one:.1f}" if one else "—"


def print_run(run: dict[str, Any]) -> None:
    many, one = run["many"], run["one"]
    print(f"\n{run['realms']:,} realms x {run['records_per_realm']:,} records against one realm of"
          f" {run['records']:,} (load average at start {run['loadavg']})")

    def line(label: str, on_many: str, on_one: str, rest: str = "") -> None:
        print(f"{label:<32}  {on_many:>12}  {on_one:>12}{rest}")

    line("call", "many p50 ms", "one p50 ms", f"  {'many/one':>8}  {'many CPU ms':>11}  {'one CPU ms':>10}"
         f"  {'many/one':>8}  {'many bytes':>11}  {'one bytes':>10}")
    for call in CALLS:
        m, o = many["calls"][call.name], one["calls"][call.name]
        errors = sorted(set(m["errors"] + o["errors"]))
        line(call.name, ms(m["p50_ms"]), ms(o["p50_ms"]),
             f"  {ratio(m['p50_ms'], o['p50_ms']):>8}  {ms(m['cpu_ms']):>11}  {ms(o['cpu_ms']):>10}"
             f"  {ratio(m['cpu_ms'], o['cpu_ms']):>8}  {m['bytes']:>11,}  {o['bytes']:>10,}"
             + ("  errors: " + "; ".join(errors) if errors else ""))
    line("first call after start, ms", ms(many["first_call_after_start_ms"]), ms(one["first_call_after_start_ms"]),
         "  (rpc records, first page; console indexes on disk at start:"
         f" {many['console_indexes_on_disk_at_start']}/{one['console_indexes_on_disk_at_start']})")
    line("realms of the rows before page 5", f"{many['realms_before_page_5']:,}", f"{one['realms_before_page_5']:,}")
    line("open file descriptors", f"{many['open_fds']:,}", f"{one['open_fds']:,}")
    line("resident memory, MiB", f"{many['rss_mib']:,.0f}", f"{one['rss_mib']:,.0f}")
    line("peak resident memory, MiB", f"{many['peak_rss_mib']:,.0f}", f"{one['peak_rss_mib']:,.0f}")
    line("idle CPU, % of a core", f"{many['idle_cpu_of_a_core']:.1%}", f"{one['idle_cpu_of_a_core']:.1%}")
    print(f"seeding: {run['seed_seconds']['many']:.0f} s for the {run['realms']:,} realms,"
          f" {run['seed_seconds']['one']:.0f} s for the one realm"
          f"{' (reused: the seconds are from when they were seeded)' if run['reused'] else ''}")


def main() -> None:
    args = parse_args()
    base = args.keep.absolute() if args.keep else Path(tempfile.mkdtemp(prefix="realms-bench-"))
    runs = []
    each = args.records_per_realm
    for count in args.realms:
        total = count * each
        print(f"{count:,} realms of {each:,} records, and one realm of {total:,}", flush=True)
        many = seeded_state(base / f"realms-{count}x{each}", realm_names(count), each)
        # The one realm tells the story once for each of the N realms: the same quarantine queue,
        # proposals and dream runs, so a page's rows and bytes are the same on both states.
        one = seeded_state(base / f"one-{total}-{count}-stories", [ONE_REALM], total, stories_each=count)
        run: dict[str, Any] = {
            "realms": count, "records_per_realm": each, "records": total,
            "states": {"many": str(many.path), "one": str(one.path)},
            "seed_seconds": {"many": round(many.seed_seconds, 1), "one": round(one.seed_seconds, 1)},
            "reused": many.reused and one.reused,
            "loadavg": " ".join(f"{load:.2f}" for load in os.getloadavg()),
        }
        began = time.monotonic()
        print("  all realms:", flush=True)
        run["many"] = measure(many, None, [], args)
        print(f"  realm {ONE_REALM}:", flush=True)
        run["one"] = measure(one, ONE_REALM, [ONE_REALM] if total >= INDEXED_FROM_RECORDS else [], args)
        run["measure_seconds"] = round(time.monotonic() - began, 1)
        print_run(run)
        print(f"measuring took {run['measure_seconds']:.0f} s", flush=True)
        runs.append(run)
    if args.json:
        args.json.write_text(json.dumps({"runs": runs}, indent=2) + "\n")
        print(f"\nfigures written to {args.json}")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
