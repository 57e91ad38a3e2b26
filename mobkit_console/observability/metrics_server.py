"""The metrics process: the workers' metrics summed, with what is worked out at scrape time.

``bin/serve`` starts it beside uvicorn (``manage.py serve_metrics``) and it ends with it. It
serves ``GET /metrics`` on ``HOST:METRICS_PORT``, a port of its own, so no proxy route, sign-in
or access rule is ever in its way, nor it in theirs (docs/serving.md §8):

- what each worker recorded, from the files of ``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's
  ``MultiProcessCollector``), after marking the workers that are gone (uvicorn replaces a worker
  that dies; ``mark_process_dead`` drops its live gauges, its counters stay in the sums);
- per realm, the quarantine backlog and how long its oldest record has waited, and each replica
  realm's lag (``RealmCollector``), from selectors that keep their answer while a realm file
  stands still: a scrape of 500 quiet realms reads no realm.

One scrape at a time on one thread: its realm connections are this thread's, closed after each.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from memory_panel.selectors.quarantine import quarantine_backlog
from memory_panel.selectors.replicas import replica_lag
from memory_panel.store.realms import close_realm_connections, realm_names

logger = logging.getLogger("mobkit_console.observability")

METRICS_PATH = "/metrics"
_PID_OF_FILE = re.compile(r"_(\d+)\.db$")


class RealmCollector(Collector):
    """Gauges per realm, worked out at each scrape (the workers hold no such value)."""

    def collect(self) -> Iterator[Metric]:
        started = time.perf_counter()
        waiting = GaugeMetricFamily(
            "mobkit_quarantined_records", "Records waiting in quarantine for review, by realm.", labels=["realm"])
        oldest = GaugeMetricFamily(
            "mobkit_quarantine_oldest_wait_seconds",
            "How long the realm's longest-waiting quarantined record has waited (0: none waits).", labels=["realm"])
        unreadable = 0
        now_ms = time.time_ns() // 1_000_000
        try:
            for realm in realm_names():
                try:
                    backlog = quarantine_backlog(realm)
                except Exception as error:  # noqa: BLE001 - a busy, damaged or indexing realm: the others are counted
                    logger.debug("metrics: realm %r not counted: %s", realm, error)
                    unreadable += 1
                    continue
                waiting.add_metric([realm], backlog.records)
                since = backlog.oldest_created_at_ms
                oldest.add_metric([realm], 0.0 if since is None else max(0, now_ms - since) / 1000)
        finally:
            close_realm_connections()
        yield waiting
        yield oldest
        yield GaugeMetricFamily(
            "mobkit_realms_unreadable", "Realms the last scrape could not count (busy, damaged, being indexed).",
            value=unreadable)
        yield from _replica_gauges()
        yield GaugeMetricFamily(
            "mobkit_metrics_realm_scrape_seconds", "Time the last scrape spent on the per-realm gauges.",
            value=time.perf_counter() - started)


def _replica_gauges() -> Iterable[Metric]:
    lag = GaugeMetricFamily(
        "mobkit_replica_lag_seconds", "Since when a replica realm's copy is known to be current, by realm.",
        labels=["realm"])
    stale = GaugeMetricFamily(
        "mobkit_replica_stale", "1 when a replica realm's copy is flagged stale (Holdings says why).", labels=["realm"])
    for entry in replica_lag():
        if entry.age_s is not None:
            lag.add_metric([entry.realm], entry.age_s)
        stale.add_metric([entry.realm], 1 if entry.stale else 0)
    return lag, stale


def mark_dead_processes(directory: Path) -> list[int]:
    """Mark every process that wrote to ``directory`` and is gone; the pids marked."""
    pids = {int(found.group(1)) for path in directory.glob("*.db") if (found := _PID_OF_FILE.search(path.name))}
    dead = sorted(pid for pid in pids if not _alive(pid))
    for pid in dead:
        multiprocess.mark_process_dead(pid, str(directory))
    return dead


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Killed but not yet reaped by uvicorn's supervisor: a zombie serves nothing.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc: the signal's answer stands


def metrics_app(directory: Path) -> Callable[..., Iterable[bytes]]:
    """The WSGI app answering ``GET /metrics`` (404 elsewhere)."""
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(directory))
    registry.register(RealmCollector())
    exposition = make_wsgi_app(registry)

    def app(environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != METRICS_PATH:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"the metrics are at /metrics\n"]
        mark_dead_processes(directory)
        return exposition(environ, start_response)

    return app


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log: a scrape every few seconds would be most of the log."""


class _Server6(WSGIServer):
    address_family = socket.AF_INET6


def metrics_server(host: str, port: int, directory: Path) -> WSGIServer:
    """The server, bound (OSError when the port is taken); ``serve_forever`` runs it."""
    server_class = _Server6 if ":" in host else WSGIServer
    return make_server(host, port, metrics_app(directory), server_class=server_class, handler_class=_QuietHandler)
