"""Replica lag benchmark: from a write on the agent host to the console reading it (docs/replicas.md §9).

An agent host with N realms (one of them percent-encoded) shipped by a real ``litestream replicate``
(its default 1 s sync interval) to a replica store (a directory, or with --store an S3 or SFTP
server on loopback); a real ``manage.py follow_replicas`` on the console side; then writes, one
at a time, round-robin over the realms. Each write's lag is the time from its commit on the agent
host to the first fresh read-only connection on the console's copy (``connect_readonly``, as a
page request opens one) that finds the record; the copies are polled every 20 ms.

    .venv/bin/python bench/replica_lag.py                       # 10 realms, 100 writes, 0.3 s apart
    .venv/bin/python bench/replica_lag.py --realms 10 --writes 200 --follow-interval-ms 250
    .venv/bin/python bench/replica_lag.py --store s3                  # through moto's S3 server, on loopback
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

POLL_S = 0.02
WATCH_S = 0.25  # MOBKIT_TIMELINE_FOLLOW_INTERVAL_S's default


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def copy_holds(copy: Path, memory_id: str) -> bool:
    from memory_panel.store.realms import connect_readonly

    try:
        conn = connect_readonly(copy)
    except Exception:  # noqa: BLE001 - a copy being restored afresh is briefly absent
        return False
    try:
        return conn.execute("SELECT 1 FROM records WHERE memory_id=?", (memory_id,)).fetchone() is not None
    except Exception:  # noqa: BLE001
        return False
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realms", type=int, default=10)
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--gap-s", type=float, default=0.3, help="seconds between writes")
    parser.add_argument("--follow-interval-ms", type=int, default=1000, help="follow_replicas' poll (its default)")
    parser.add_argument("--store", choices=("file", "s3", "sftp"), default="file",
                        help="the replica store, run on loopback: a directory, moto's S3 server or an SFTP server")
    parser.add_argument("--keep", type=Path, help="work in this (new) directory and keep it: the hosts' logs")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="replica-lag-") as tmp:
        base = (args.keep or Path(tmp)).absolute()
        from tests.support.litestream import store_start

        store = store_start(args.store, base)
        # The console in this process: the console host's state, its database and its source.
        os.environ.update(DJANGO_SETTINGS_MODULE="mobkit_console.settings", DJANGO_SECRET_KEY="replica-lag-bench",
                          MOBKIT_PERSISTENT_STATE=str(base / "console-state"),
                          MOBKIT_REPLICA_SOURCES=f"east={store.url}")
        import django

        django.setup()
        from django.core.management import call_command

        from memory_panel.simulator.store_writer import identity_scope
        from memory_panel.store.realms import encode_path_segment
        from mobkit_console.timeline.watcher import RealmWatcher
        from tests.support.litestream import AgentHost, ConsoleHost, wait_for
        from tests.support.written import new_scribe

        call_command("migrate", verbosity=0)
        agent_memory = base / "agent" / "agent-memory"
        agent_memory.mkdir(parents=True)
        names = ["team:blue"] + [f"realm-{i:02d}" for i in range(1, args.realms)]
        scribes = {name: new_scribe(agent_memory, name) for name in names}
        for name, scribe in scribes.items():
            scribe.remember(identity_scope(name, "identity:lead"), "first", "first note")
        agent = AgentHost(agent_memory, store, base / "agent").start()
        console = ConsoleHost(base / "console-state", store, interval_ms=args.follow_interval_ms).start()
        copies = console.copies / "east"
        try:
            for name in names:
                wait_for(lambda: (copies / f"{encode_path_segment(name)}.sqlite3-txid").exists(), timeout_s=60,
                         what=f"the copy of {name}")
            lags: list[tuple[float, str, float]] = []  # (lag, realm, written at: Unix seconds)
            pending: dict[str, tuple[str, float, float]] = {}
            written_at: dict[str, float] = {}
            timeline: list[float] = []
            stop = threading.Event()

            def watch() -> None:
                watcher = RealmWatcher(broadcast=lambda rows: None)
                try:
                    while not stop.is_set():
                        for event in watcher.poll_once():
                            at = written_at.get(event.data.get("record_id"))
                            if event.event_type == "memory.record.remembered" and at is not None:
                                timeline.append(time.monotonic() - at)
                        stop.wait(WATCH_S)
                finally:
                    watcher.close()

            watching = threading.Thread(target=watch, daemon=True)
            watching.start()
            time.sleep(1)  # its first poll marks the copies' ends
            next_write = time.monotonic()
            written = 0
            while written < args.writes or pending:
                now = time.monotonic()
                if written < args.writes and now >= next_write:
                    name = names[written % len(names)]
                    memory_id = scribes[name].remember(identity_scope(name, "identity:lead"),
                                                       f"lag probe {written}", f"probe body {written}").id
                    pending[memory_id] = (name, time.monotonic(), time.time())
                    written_at[memory_id] = pending[memory_id][1]
                    written += 1
                    next_write += args.gap_s
                for memory_id, (name, at, wall) in list(pending.items()):
                    if copy_holds(copies / f"{encode_path_segment(name)}.sqlite3", memory_id):
                        lags.append((time.monotonic() - at, name, wall))
                        del pending[memory_id]
                    elif time.monotonic() - at > 60:
                        raise SystemExit(f"write {memory_id} not on the console after 60 s")
                time.sleep(POLL_S)
            wait_for(lambda: len(timeline) >= args.writes, timeout_s=60, what="every write on the timeline")
            stop.set()
            watching.join()
        finally:
            console.stop()
            agent.stop()
            store.stop()
            for scribe in scribes.values():
                scribe.writer.close()

    ms = [lag * 1000 for lag, _, _ in lags]
    print(f"{args.store} store, {args.realms} realms, {len(ms)} writes {args.gap_s:g} s apart, litestream replicate sync 1 s, "
          f"follow_replicas --follow-interval-ms {args.follow_interval_ms}")
    print(f"write → console read, ms: p50 {percentile(ms, 50):.0f}  p90 {percentile(ms, 90):.0f}  "
          f"p99 {percentile(ms, 99):.0f}  max {max(ms):.0f}  mean {statistics.fmean(ms):.0f}")
    events = [lag * 1000 for lag in timeline]
    print(f"write → timeline event, ms: p50 {percentile(events, 50):.0f}  p90 {percentile(events, 90):.0f}  "
          f"p99 {percentile(events, 99):.0f}  max {max(events):.0f}")
    slowest = sorted(lags, reverse=True)[:3]
    print("slowest: " + ", ".join(f"{name} {lag * 1000:.0f} ms (written {time.strftime('%H:%M:%S', time.gmtime(wall))})"
                                  for lag, name, wall in slowest))


if __name__ == "__main__":
    main()
