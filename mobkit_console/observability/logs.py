"""One log formatter for every logger of a console process (docs/serving.md §8).

The console, Django, daphne and uvicorn all log through the standard library; structlog's
``ProcessorFormatter`` turns each record into one JSON object a line (``LOG_FORMAT=json``) or a
readable line (``console``), adding what the request bound with structlog's contextvars (its id,
the subject, the realm) and, with tracing on, the trace and span ids.

Settings build Django's ``LOGGING`` with ``logging_config``; uvicorn's supervisor, which loads no
Django settings, gets the same formatter from ``uvicorn-logging.json`` (``bin/serve --log-config``)
through ``server_formatter``.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any, TextIO

import structlog

from mobkit_console.observability import tracing

LOG_FORMATS = ("json", "console")
# A realm named by a request is logged up to this long: the name is the caller's to choose.
REALM_LOGGED_CHARS = 200


def log_format(value: str | None, *, stream: TextIO) -> str:
    """``LOG_FORMAT`` as given, or by default console text on a terminal and JSON lines otherwise.

    Raises ValueError naming the accepted values for any other.
    """
    chosen = (value or "").strip().lower()
    if not chosen:
        return "console" if stream.isatty() else "json"
    if chosen not in LOG_FORMATS:
        raise ValueError(f"LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, not {value!r}")
    return chosen


def _add_trace_ids(logger: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
    ids = tracing.current_trace_ids()
    if ids is not None:
        event.update(ids)
    return event


def formatter(log_format: str) -> structlog.stdlib.ProcessorFormatter:
    """The formatter of ``log_format`` (``json`` or ``console``) for a standard-library handler.

    Every process installs its handler through here, so this is also where Python's warnings
    become log records: a JSON log then holds nothing but JSON.
    """
    logging.captureWarnings(True)
    pre_chain = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_trace_ids,
    ]
    if log_format == "json":
        # A traceback is one string field of its line, never lines of its own.
        render = [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    else:
        render = [structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())]
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=pre_chain,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *render],
    )


def server_formatter() -> structlog.stdlib.ProcessorFormatter:
    """uvicorn's supervisor's formatter: it starts before, and without, Django's settings, so it reads
    ``LOG_FORMAT`` itself (bin/serve has checked it)."""
    return formatter(log_format(os.environ.get("LOG_FORMAT"), stream=sys.stderr))


def logging_config(log_format: str) -> dict[str, Any]:
    """Django's ``LOGGING``: every logger through one stderr handler with the structured formatter.

    Django's own default handlers (the console one shows only with DEBUG, mail_admins) give way:
    its loggers propagate to the root, so a request's warnings are logged in production too.
    """
    through_root = {"handlers": [], "level": "INFO", "propagate": True}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"structured": {"()": formatter, "log_format": log_format}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "structured"}},
        "root": {"handlers": ["stderr"], "level": "WARNING"},
        "loggers": {
            "mobkit_console": {"level": "INFO"},
            "memory_panel": {"level": "INFO"},
            "access": {"level": "INFO"},
            "daphne": {"level": "INFO"},
            "django": through_root,
            "django.server": through_root,
            "django.channels.server": through_root,
        },
    }


def request_context_bind(**values: str) -> None:
    """Add to what this request's log lines carry (structlog contextvars)."""
    structlog.contextvars.bind_contextvars(**values)


def request_context_start(request_id: str) -> None:
    """A request's log context, fresh: a pool thread's previous request leaves nothing behind."""
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(request_id=request_id)

