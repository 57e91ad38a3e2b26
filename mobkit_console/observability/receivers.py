"""Metrics and spans from what the memory store tells (memory_panel/store/signals.py) and from its
realm connections (docs/serving.md §8)."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db.backends.signals import connection_created
from django.dispatch import receiver

from memory_panel.store.realms import REALM_ALIAS_PREFIX
from memory_panel.store.signals import index_built, index_caught_up, realm_query_interrupted
from mobkit_console.observability import metrics, tracing


@receiver(index_built, dispatch_uid="observability.index_built")
def _index_built(*, family: str, realm: str, outcome: str, seconds: float, **kwargs: Any) -> None:
    metrics.index_builds.labels(family, realm, outcome).inc()
    if outcome == "ok":
        metrics.index_build_duration.labels(family).observe(seconds)


@receiver(index_caught_up, dispatch_uid="observability.index_caught_up")
def _index_caught_up(*, family: str, realm: str, outcome: str, behind: int, **kwargs: Any) -> None:
    metrics.index_catch_ups.labels(family, realm, outcome).inc()
    metrics.index_lag.labels(family, realm).set(behind)


@receiver(realm_query_interrupted, dispatch_uid="observability.realm_query_interrupted")
def _realm_query_interrupted(*, realm: str, **kwargs: Any) -> None:
    metrics.realm_queries_interrupted.labels(realm).inc()


class RealmQueryObserver:
    """Times each realm query (to its first row) and, with tracing on, wraps it in a span."""

    def __init__(self, realm: str, *, timed: bool) -> None:
        self.realm = realm
        self.timed = timed

    def __call__(self, execute, sql, params, many, context):
        if not tracing.tracing_started():
            return self._run(execute, sql, params, many, context)
        with tracing.span("realm query", {"db.system": "sqlite", "mobkit.realm": self.realm}):
            return self._run(execute, sql, params, many, context)

    def _run(self, execute, sql, params, many, context):
        if not self.timed:
            return execute(sql, params, many, context)
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            metrics.realm_query_duration.observe(time.perf_counter() - started)


@receiver(connection_created, dispatch_uid="observability.realm_queries")
def _observe_realm_queries(sender: Any, connection: Any, **kwargs: Any) -> None:
    timed = settings.MOBKIT_METRICS_DIR is not None
    if not connection.alias.startswith(REALM_ALIAS_PREFIX) or not (timed or tracing.tracing_started()):
        return
    observer = RealmQueryObserver(connection.alias.removeprefix(REALM_ALIAS_PREFIX), timed=timed)
    # As with the query deadline: the wrapper list outlives the connection, one observer in it.
    wrappers = [w for w in connection.execute_wrappers if not isinstance(w, RealmQueryObserver)]
    connection.execute_wrappers[:] = [*wrappers, observer]
