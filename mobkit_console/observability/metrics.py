"""The Prometheus metrics a console process records (docs/serving.md §8).

Defined once per process in prometheus-client's default registry. With ``PROMETHEUS_MULTIPROC_DIR``
set (``bin/serve`` sets it for its workers) each value lives in a file of that directory, which the
metrics process sums; without it (runserver, tests) they are plain in-memory values nobody serves.
A gauge's ``multiprocess_mode`` says how the processes' values combine: ``livesum`` adds the live
processes' values (a worker that died takes its open streams with it), ``mostrecent`` keeps the
latest value any process set.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Page and RPC latencies: a page is tens of milliseconds, the time limit a few seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Realm queries: most take well under a millisecond; the time limit (2 s by default) ends the rest.
QUERY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
# Index builds: a small realm in a second, a million records in minutes.
BUILD_BUCKETS = (0.5, 1.0, 5.0, 15.0, 60.0, 180.0, 600.0, 1800.0)

http_requests = Counter(
    "mobkit_http_requests", "HTTP requests answered by Django, by URL pattern name, method and status.",
    ["route", "method", "status"],
)
http_request_duration = Histogram(
    "mobkit_http_request_duration_seconds",
    "Time from a request reaching Django to its response (a stream's headers, not its end), by URL pattern name.",
    ["route"], buckets=LATENCY_BUCKETS,
)
rpc_calls = Counter(
    "mobkit_rpc_calls", "JSON-RPC calls by method (unregistered names are 'other') and error code ('ok': none).",
    ["method", "code"],
)
rpc_call_duration = Histogram(
    "mobkit_rpc_call_duration_seconds", "Time one JSON-RPC call ran, by method.", ["method"], buckets=LATENCY_BUCKETS,
)
realm_query_duration = Histogram(
    "mobkit_realm_query_duration_seconds",
    "Time a realm query took to its first row (the statement's execute, where SQLite does the sorting and counting).",
    buckets=QUERY_BUCKETS,
)
realm_queries_interrupted = Counter(
    "mobkit_realm_queries_interrupted",
    "Realm queries stopped by MOBKIT_REALM_QUERY_TIMEOUT_MS, by realm.", ["realm"],
)
index_builds = Counter(
    "mobkit_index_builds", "Index generations written (family realm-index or search-index), by realm and outcome.",
    ["family", "realm", "outcome"],
)
index_build_duration = Histogram(
    "mobkit_index_build_duration_seconds", "Time an index build took, by family.", ["family"], buckets=BUILD_BUCKETS,
)
index_catch_ups = Counter(
    "mobkit_index_catch_ups",
    "Looks at an index's audit feed: 'current' (nothing new), 'applied' (caught up), 'rebuild' (only a rebuild can help).",
    ["family", "realm", "outcome"],
)
index_lag = Gauge(
    "mobkit_index_lag_audit_rows",
    "Audit rows the realm held past the index's high-water mark at its latest catch-up.",
    ["family", "realm"], multiprocess_mode="mostrecent",
)
timeline_streams = Gauge(
    "mobkit_timeline_open_streams", "Open timeline streams (WebSockets and SSE responses).", ["kind"],
    multiprocess_mode="livesum",
)
timeline_events_ingested = Counter(
    "mobkit_timeline_events_ingested",
    "Events stored in the timeline's log, pushed or read from the realms (a retried push's copies not counted).",
)
timeline_events_fanned_out = Counter(
    "mobkit_timeline_events_fanned_out", "Events written to open streams, counted once per stream.",
)
audit_entries_queued = Counter("mobkit_audit_entries_queued", "Audit entries queued for the background writer.")
audit_entries_written = Counter(
    "mobkit_audit_entries_written", "Audit entries written to the console database, queued or written at once.",
)
audit_entries_lost = Counter("mobkit_audit_entries_lost", "Queued audit entries a failed write lost.")
alert_deliveries_attempted = Counter(
    "mobkit_alert_deliveries_attempted", "Attempts to deliver an alert notice to one receiver (docs/alerts.md §3).",
)
alert_deliveries_failed = Counter("mobkit_alert_deliveries_failed", "Alert delivery attempts that failed (retried).")
alert_deliveries_dropped = Counter(
    "mobkit_alert_deliveries_dropped", "Alert notices given up after MOBKIT_ALERTS_MAX_ATTEMPTS failed attempts.",
)

# The JSON-RPC method label of a name no method is registered under: callers choose method names.
OTHER_METHOD = "other"
# Requests Django answered before any URL was resolved, or with none (static files, a 404).
UNMATCHED_ROUTE = "unmatched"
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def http_method_label(method: str | None) -> str:
    """A request's method as a label: clients may send any token, so unknown ones fold into one."""
    return method if method in HTTP_METHODS else "other"
