"""Timeline fan-out benchmark: N sockets, events ingested at R per second for S seconds.

Measures, per channel layer, the delivery latency (from just before the ingest POST to the frame
arriving at a socket: store, broadcast and send included), the loss (frames that never arrived),
duplicates, and the server processes' CPU time per event.

    .venv/bin/python bench/timeline_fanout.py                      # 100 sockets, 200/s, 30 s, all layers
    .venv/bin/python bench/timeline_fanout.py --layers memory --seconds 5

Layers: ``memory`` (InMemoryChannelLayer, one daphne), ``redis-pubsub`` and ``redis-core``
(channels-redis's two layers, two daphnes sharing Redis, sockets and ingest split between them).
``--server serve --workers N`` serves through ``bin/serve`` instead: N uvicorn workers on one port
(the kernel spreads the sockets and the ingest connections over them; N > 1 needs a Redis layer).

    .venv/bin/python bench/timeline_fanout.py --server serve --workers 2 --layers redis-pubsub \
        --sockets 1000 --rate 20 --batch-frames
Each run gets its own persistent_state and console database under a temporary directory. The
sockets live in a few client processes so the measuring side is not the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import itertools
import json
import multiprocessing
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from contextlib import contextmanager  # noqa: E402

from tests.support.servers import daphne_servers, deployment_env, manage, start_serve, stop_serve  # noqa: E402

STOP = "bench-stop"
CLIENT_PROCESSES = 4
IDLE_S = 20.0
LAYER_BACKENDS = {
    "redis-pubsub": "channels_redis.pubsub.RedisPubSubChannelLayer",
    "redis-core": "channels_redis.core.RedisChannelLayer",
}


def _settings_module(directory: Path, backend: str) -> None:
    """A settings module that is the console's own, with the channel layer under test."""
    (directory / "bench_settings.py").write_text(
        "from mobkit_console.settings import *  # noqa: F401,F403\n"
        "from mobkit_console.settings import REDIS_URL\n"
        f"CHANNEL_LAYERS = {{'default': {{'BACKEND': {backend!r}, 'CONFIG': {{'hosts': [REDIS_URL]}}}}}}\n",
        encoding="utf-8",
    )


def _client_worker(urls: list[str], ready, results) -> None:
    """One client process: open its sockets, record latencies until the stop event arrives or a
    socket has been silent for IDLE_S once events flowed (an overloaded layer may drop the stop
    event too)."""
    import websockets

    async def follow(url: str, opened: asyncio.Event) -> tuple[list[float], int, int]:
        latencies: list[float] = []
        seen: set[str] = set()
        duplicated = 0
        async with websockets.connect(url, max_queue=None, open_timeout=30) as connection:
            opened.set()
            async for text in _until_idle(connection):
                frame = json.loads(text)
                # One event per frame, or with ?batch=1 what arrived in one tick.
                events = frame["events"] if frame["type"] == "events" else [frame["event"]] \
                    if frame["type"] == "event" else []
                arrived = time.time_ns()
                for event in events:
                    data = event["data"]
                    if data.get("run_id") == STOP:
                        return latencies, len(seen), duplicated
                    if data["run_id"] in seen:
                        duplicated += 1
                        continue
                    seen.add(data["run_id"])
                    latencies.append((arrived - data["sent_ns"]) / 1e6)
        return latencies, len(seen), duplicated

    async def _until_idle(connection):
        started = False
        while True:
            try:
                text = await asyncio.wait_for(connection.recv(), IDLE_S if started else 3600.0)
            except (asyncio.TimeoutError, websockets.ConnectionClosed):
                return
            started = started or '"type":"event' in text
            yield text

    async def main() -> None:
        events = [asyncio.Event() for _ in urls]
        tasks = [asyncio.create_task(follow(url, opened)) for url, opened in zip(urls, events)]
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 60)
        ready.put(len(urls))
        done = await asyncio.gather(*tasks)
        results.put([list(item) for item in done])

    asyncio.run(main())


def _ingest_loop(servers, token: str, rate: float, seconds: float, batch: int) -> tuple[int, float]:
    """Post ``batch`` events per request so that ``rate`` events/s go in, over a few keep-alive
    connections; a server slower than that simply gets a lower achieved rate (reported)."""
    lanes = 4
    requests_per_lane = rate / batch / lanes
    total_requests = int(rate * seconds / batch)
    sent = [0] * lanes
    start = time.monotonic() + 0.5

    def lane(index: int) -> None:
        server = servers[index % len(servers)]
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        for n in range(index, total_requests, lanes):
            pause = start + (n // lanes) / requests_per_lane - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            now = time.time_ns()
            body = json.dumps([{"identity": "_system", "event_type": "memory.dream.started", "timestamp_ms": 0,
                                "data": {"realm": "bench", "run_id": f"e{n}-{k}", "sent_ns": now}}
                               for k in range(batch)])
            connection.request("POST", "/console/events", body=body,
                               headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            response.read()
            if response.status != 201:
                raise RuntimeError(f"ingest answered {response.status}")
            sent[index] += batch

    threads = [threading.Thread(target=lane, args=(i,)) for i in range(lanes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(sent), time.monotonic() - start


@contextmanager
def _servers(env: dict[str, str], *, server: str, processes: int):
    """The servers under test: ``processes`` daphnes, or one bin/serve with that many workers."""
    if server == "daphne":
        with daphne_servers(env, processes) as servers:
            yield servers
        return
    serve = start_serve(env, processes)
    try:
        yield [serve]
    finally:
        stop_serve(serve)


def run_layer(layer: str, *, sockets: int, rate: float, seconds: float, batch: int, redis_url: str,
              batch_frames: bool, server: str = "daphne", workers: int = 2, database_url: str = "") -> dict:
    with tempfile.TemporaryDirectory(prefix=f"timeline-bench-{layer}-") as scratch:
        state = Path(scratch) / "state"
        (state / "console").mkdir(parents=True)
        extra = {"MOBKIT_TIMELINE_MAX_EVENTS": "1000000"}
        processes = 1
        if layer != "memory":
            _settings_module(Path(scratch), LAYER_BACKENDS[layer])
            extra.update(REDIS_URL=redis_url, PYTHONPATH=f"{scratch}:{REPO}")
            processes = 2
        if server == "serve":
            processes = workers
        env = deployment_env(state, **extra)
        if database_url:
            env["DATABASE_URL"] = database_url
        if layer != "memory":
            env["DJANGO_SETTINGS_MODULE"] = "bench_settings"
        manage(env, "migrate", "--noinput")
        manage(env, "collectstatic", "--noinput", "-v0")  # the pages' asset manifest (as bin/demo does)
        auth = manage(env, "mobkit_token", "bench@example.test").strip().splitlines()[-1]
        with _servers(env, server=server, processes=processes) as servers:
            query = f"auth_token={auth}" + ("&batch=1" if batch_frames else "")
            urls = [f"{servers[i % len(servers)].ws}/ws/console/events/?{query}" for i in range(sockets)]
            ready, results = multiprocessing.Queue(), multiprocessing.Queue()
            groups = [urls[i::CLIENT_PROCESSES] for i in range(CLIENT_PROCESSES)]
            workers = [multiprocessing.Process(target=_client_worker, args=(group, ready, results))
                       for group in groups if group]
            for worker in workers:
                worker.start()
            for _ in workers:
                ready.get(timeout=120)
            time.sleep(0.5)
            cpu_before = sum(s.cpu_seconds() for s in servers)
            sent, took = _ingest_loop(servers, env["MOBKIT_INGEST_TOKEN"], rate, seconds, batch)
            time.sleep(3)  # let the tail drain before the stop marker
            server_cpu = sum(s.cpu_seconds() for s in servers) - cpu_before
            stop = json.dumps({"identity": "_system", "event_type": "memory.dream.started", "timestamp_ms": 0,
                               "data": {"realm": "bench", "run_id": STOP}})
            connection = http.client.HTTPConnection("127.0.0.1", servers[0].port, timeout=30)
            connection.request("POST", "/console/events", body=stop, headers={
                "Content-Type": "application/json", "Authorization": f"Bearer {env['MOBKIT_INGEST_TOKEN']}"})
            connection.getresponse().read()
            per_socket = list(itertools.chain.from_iterable(results.get(timeout=120) for _ in workers))
            for worker in workers:
                worker.join(timeout=30)
    latencies = sorted(itertools.chain.from_iterable(item[0] for item in per_socket))
    delivered = sum(item[1] for item in per_socket)
    duplicated = sum(item[2] for item in per_socket)
    expected = sent * sockets
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [float("nan")] * 99
    return {
        "layer": layer, "processes": processes, "sockets": sockets, "events": sent, "rate": sent / took,
        "expected": expected, "delivered": delivered, "loss_pct": 100 * (expected - delivered) / expected,
        "duplicated": duplicated, "cpu_ms_per_event": 1000 * server_cpu / sent,
        "p50_ms": quantiles[49], "p99_ms": quantiles[98], "max_ms": latencies[-1] if latencies else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=100)
    parser.add_argument("--rate", type=float, default=200.0, help="events ingested per second")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--batch", type=int, default=1, help="events per ingest request (default 1)")
    parser.add_argument("--layers", default="memory,redis-pubsub,redis-core")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--server", choices=("daphne", "serve"), default="daphne",
                        help="daphne processes (one per layer's process count) or bin/serve's uvicorn workers")
    parser.add_argument("--workers", type=int, default=2, help="with --server serve: WORKERS")
    parser.add_argument("--database-url", default="",
                        help="the console database the servers share (default: SQLite in the run's state); "
                             "give a PostgreSQL database of its own: the run migrates it and leaves its events there")
    parser.add_argument("--batch-frames", action="store_true",
                        help="sockets ask for ?batch=1: one frame per tick instead of one per event")
    args = parser.parse_args()
    frames = "batch frames" if args.batch_frames else "one frame per event"
    served = "daphne" if args.server == "daphne" else f"bin/serve with {args.workers} uvicorn workers"
    print(f"{args.sockets} sockets, {args.rate:g} events/s for {args.seconds:g} s, {args.batch} per request, {frames}, {served}")
    print(f"{'layer':<14}{'procs':>6}{'events':>8}{'rate/s':>8}{'delivered':>11}{'loss %':>8}{'dup':>6}"
          f"{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'cpu ms/event':>14}")
    for layer in args.layers.split(","):
        r = run_layer(layer, sockets=args.sockets, rate=args.rate, seconds=args.seconds, batch=args.batch,
                      redis_url=args.redis_url, batch_frames=args.batch_frames, server=args.server,
                      workers=args.workers, database_url=args.database_url)
        print(f"{r['layer']:<14}{r['processes']:>6}{r['events']:>8}{r['rate']:>8.0f}{r['delivered']:>11}{r['loss_pct']:>8.2f}{r['duplicated']:>6}"
              f"{r['p50_ms']:>9.1f}{r['p99_ms']:>9.1f}{r['max_ms']:>9.1f}{r['cpu_ms_per_event']:>14.2f}", flush=True)


if __name__ == "__main__":
    main()
