"""``GET /healthz`` and ``GET /readyz``: what a process manager or Kubernetes asks a server process
(docs/serving.md §6).

Both are plain ASGI apps that ``mobkit_console/asgi.py`` routes to before Django sees the request:

- a probe is answered whatever its ``Host`` header: Kubernetes sends the pod's IP, which is in no
  ``DJANGO_ALLOWED_HOSTS``, and Django's host check (in ``CommonMiddleware``, CSRF, ``get_host``)
  would answer it 400;
- a probe passes no middleware: it creates no session, sets no cookie, names no caller, writes no
  audit entry, and is counted in no request log. Inside Django even a middleware answering first
  would not do: Django's handler logs every response of 400 and more, so a failing ``/readyz``
  would write a line per probe;
- liveness is answered on the event loop, never queued behind the page threads: a busy process is
  alive, and a liveness probe that waited behind slow pages would have it restarted.

``/readyz`` runs its checks on threads of their own, each chain at most once at a time, and answers
within ``READY_WITHIN_S`` whatever they do: a check stuck on an unreachable host (a connect waiting
for TCP's timeout) is reported as not answering, never piles up threads, and never holds the
process at exit (its thread is a daemon).
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.executor import MigrationExecutor

from memory_panel import conf
from memory_panel.selectors.replicas import replica_health

# A probe answers within this; Kubernetes' timeoutSeconds should be longer (docs/serving.md §6).
READY_WITHIN_S = 2.5
DATABASE_CONNECT_TIMEOUT_S = 2  # libpq's least: it takes whole seconds, and reads 1 as 2
REDIS_TIMEOUT_S = 1.0
ERROR_TEXT_MAX = 400


class NotReady(Exception):
    """A check that found the process not ready; its text is the probe's ``error``."""


def probe_connection() -> BaseDatabaseWrapper:
    """A connection to the console database of the probe's own, closed after each probe.

    PostgreSQL's gives up connecting after ``DATABASE_CONNECT_TIMEOUT_S``: a server that accepts the
    connection and never answers (or a host that drops the packets) would otherwise hold the check
    until TCP gives up, minutes later, or for good.
    """
    default = connections["default"]
    settings_dict = copy.deepcopy(default.settings_dict)
    if default.vendor == "postgresql":
        settings_dict["OPTIONS"]["connect_timeout"] = DATABASE_CONNECT_TIMEOUT_S
    return type(default)(settings_dict, DEFAULT_DB_ALIAS)


def database_check(connection: BaseDatabaseWrapper) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "ok"


_migrated = False


def migrations_check(connection: BaseDatabaseWrapper) -> str:
    """Every migration of the code running is applied. Once true it stays true for this process
    (its code does not change), so the migration graph is loaded until then only."""
    global _migrated
    if not _migrated:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if plan:
            first = plan[0][0]
            raise NotReady(f"{len(plan)} migrations not applied (the first: {first.app_label}.{first.name}): "
                           "run manage.py migrate")
        _migrated = True
    return "ok"


def redis_check() -> str:
    if not settings.REDIS_URL:
        return "not configured (REDIS_URL unset: one process, in-memory channel layer)"
    # Imported here: redis-py 8 imports OpenTelemetry's SDK with itself, which a console without
    # Redis and without tracing should not load (docs/serving.md §8).
    import redis
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=REDIS_TIMEOUT_S,
                                  socket_timeout=REDIS_TIMEOUT_S)
    try:
        client.ping()
    finally:
        client.close()
    return "ok"


def realms_check() -> str:
    """The directory the realm files are read from can be listed (MOBKIT_PERSISTENT_STATE or
    MOBKIT_AGENT_MEMORY_ROOT names it; an unmounted volume is the usual failure)."""
    root = conf.agent_memory_root()
    if not root.is_dir():
        raise NotReady(f"{root} is not a directory (MOBKIT_PERSISTENT_STATE, MOBKIT_AGENT_MEMORY_ROOT)")
    with os.scandir(root) as entries:
        next(entries, None)
    return "ok"


def replicas_check() -> str:
    """No replica realm's copy flagged stale and every source listed: what ``/console/replicas/health``
    computes (docs/replicas.md §5)."""
    health = replica_health()
    if not health.ok:
        raise NotReady("; ".join(health.problems))
    return f"{len(health.lags)} replica realms current" if health.lags else "no replica realms"


Answer = tuple[str, str, bool]  # (check, what it found or why it failed, passed)


def _answers(checks: Sequence[tuple[str, Callable[[], str]]]) -> list[Answer]:
    """The checks one after another, stopping at the first that fails."""
    answers = []
    for name, check in checks:
        try:
            answers.append((name, check(), True))
        except Exception as error:  # noqa: BLE001 - every failure is the probe's answer, said
            answers.append((name, _said(error), False))
            break
    return answers


def _said(error: Exception) -> str:
    text = " ".join(str(error).split()) or "no reason given"
    said = text if isinstance(error, NotReady) else f"{type(error).__name__}: {text}"
    return said[:ERROR_TEXT_MAX]


def _database_answers() -> list[Answer]:
    """The database, then its migrations (read from it, so not while it does not answer), on one
    connection of the probe's own."""
    connection = probe_connection()
    try:
        return _answers([("database", partial(database_check, connection)),
                         ("migrations", partial(migrations_check, connection))])
    finally:
        connection.close()


class _Chain:
    """Checks run on a daemon thread of their own. A probe that finds the previous probe's run still
    going waits for that run rather than starting another, so a check stuck on an unreachable host
    holds one thread, not one per probe."""

    def __init__(self, name: str, answers: Callable[[], list[Answer]]) -> None:
        self.name = name  # named when the chain does not answer in time
        self.answers = answers
        self.started = 0.0
        self._lock = threading.Lock()
        self._run: Future | None = None

    def start(self) -> Future:
        with self._lock:
            if self._run is None or self._run.done():
                self._run = Future()
                self.started = time.monotonic()
                threading.Thread(target=self._answer, args=(self._run,), name=f"readyz-{self.name}",
                                 daemon=True).start()
            return self._run

    def _answer(self, run: Future) -> None:
        try:
            answers = self.answers()
        except Exception as error:  # noqa: BLE001 - a run must end with an answer, or no probe would start another
            answers = [(self.name, _said(error), False)]
        run.set_result(answers)


_CHAINS = [
    _Chain("database", _database_answers),
    _Chain("redis", partial(_answers, [("redis", redis_check)])),
    _Chain("realms", partial(_answers, [("realms", realms_check)])),
    _Chain("replicas", partial(_answers, [("replicas", replicas_check)])),
]


@dataclass(frozen=True)
class Readiness:
    checks: dict[str, str]  # check → what it found, for every check that passed
    failing: list[dict[str, str]]  # [{"check", "error"}], in check order

    @property
    def ok(self) -> bool:
        return not self.failing

    def as_json(self) -> dict[str, Any]:
        return {"ok": True, "checks": self.checks} if self.ok else {"ok": False, "failing": self.failing}


def readiness(*, within_s: float = READY_WITHIN_S) -> Readiness:
    """Every check's answer, or, for a chain that has not answered within ``within_s``, that it has not."""
    runs = [(chain, chain.start()) for chain in _CHAINS]
    wait([run for _, run in runs], timeout=within_s)
    checks: dict[str, str] = {}
    failing: list[dict[str, str]] = []
    for chain, run in runs:
        if not run.done():
            waited = time.monotonic() - chain.started
            failing.append({"check": chain.name, "error": f"no answer after {waited:.1f} s"})
            continue
        for name, said, passed in run.result():
            if passed:
                checks[name] = said
            else:
                failing.append({"check": name, "error": said})
    return Readiness(checks, failing)


async def healthz(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Liveness: the process answers. No I/O."""
    if await _refused(scope, send):
        return
    await _answer(scope, send, 200, {"ok": True})


async def readyz(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Readiness: 200 with what each check found, or 503 naming each failing check and why."""
    if await _refused(scope, send):
        return
    found = await asyncio.to_thread(readiness)
    await _answer(scope, send, 200 if found.ok else 503, found.as_json())


async def _refused(scope: dict[str, Any], send: Any) -> bool:
    if scope["method"] in ("GET", "HEAD"):
        return False
    await _answer(scope, send, 405, {"ok": False, "error": "GET or HEAD only"}, [(b"allow", b"GET, HEAD")])
    return True


async def _answer(scope: dict[str, Any], send: Any, status: int, body: dict[str, Any],
                  extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
               (b"cache-control", b"no-store"), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else payload})
