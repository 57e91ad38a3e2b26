"""Metrics, structured logs and traces of a console process (docs/serving.md §8).

- ``metrics.py``: the Prometheus metrics each process records. Under ``bin/serve`` every worker
  writes them to files in ``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode) and
  ``manage.py serve_metrics``, a process of its own beside uvicorn, sums them on ``METRICS_PORT``
  together with what it works out at scrape time (``scrape.py``: quarantine backlogs, replica lag);
- ``logs.py``: one formatter (structlog's ``ProcessorFormatter``) for every logger, Django's,
  uvicorn's, daphne's and the console's own: JSON lines or console text (``LOG_FORMAT``);
- ``middleware.py``: each request's id (``X-Request-ID``), its log context and its HTTP metrics;
- ``tracing.py``: OpenTelemetry, only when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, and imported only then.

Label values are bounded and never carry record text, record ids or subjects: routes are URL
pattern names, JSON-RPC methods are the registered names (any other is ``other``), realms are
realm names.
"""
