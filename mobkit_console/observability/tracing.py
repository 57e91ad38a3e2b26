"""OpenTelemetry traces, only when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (docs/serving.md §8).

Nothing here imports opentelemetry before ``tracing_start`` runs, and only settings with that
variable start it: without it a process neither imports the SDK nor pays for a span (``span`` is
then one shared no-op context manager).

Each process exports for itself: ``tracing_start`` runs in the app's ``ready``, in every uvicorn
worker after it started, so no exporter thread is inherited across a fork. Spans: Django's HTTP
requests (its instrumentation), each JSON-RPC call, each realm query (a wrapper around the
console's realm connections, not sqlite3 as a whole), PostgreSQL (psycopg) and Redis, and a
timeline socket's subscribe and replay — never one span for a socket's whole life.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

SERVICE_NAME = "mobkit-console"

_NO_SPAN = nullcontext()
_tracer: Any = None


def tracing_start() -> None:
    """Export this process's spans over OTLP/HTTP to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (the exporter and
    batching read the standard ``OTEL_*`` variables) and instrument Django, psycopg and Redis.

    Before Django builds its middleware chain: the Django instrumentation adds a middleware.
    """
    global _tracer
    if _tracer is not None:
        return
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.sdk.resources import SERVICE_NAME as SERVICE_NAME_KEY
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create()  # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set
    if str(resource.attributes.get(SERVICE_NAME_KEY, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME_KEY: SERVICE_NAME}))
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument()
    PsycopgInstrumentor().instrument()
    RedisInstrumentor().instrument()
    _tracer = trace.get_tracer("mobkit_console")


def tracing_started() -> bool:
    return _tracer is not None


def span(name: str, attributes: dict[str, Any] | None = None) -> AbstractContextManager:
    """A span around a block (the current one's child), or nothing when tracing is off."""
    if _tracer is None:
        return _NO_SPAN
    return _tracer.start_as_current_span(name, attributes=attributes)


def current_trace_ids() -> dict[str, str] | None:
    """The current span's trace and span ids as log fields, or None (tracing off, no span)."""
    if _tracer is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return {"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")}
