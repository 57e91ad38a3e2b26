"""``manage.py serve_metrics``: the metrics process ``bin/serve`` runs beside uvicorn (docs/serving.md §8)."""

from __future__ import annotations

import logging
import os
import threading
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from mobkit_console.observability.metrics_server import METRICS_PATH, metrics_server

logger = logging.getLogger("mobkit_console.observability")

# How often the process looks whether the server it serves beside is still there.
PARENT_CHECK_S = 1.0


class Command(BaseCommand):
    help = "Serve the server processes' metrics, summed, in Prometheus text at http://HOST:PORT/metrics."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=9464)
        parser.add_argument("--exit-with-parent", action="store_true",
                            help="stop once the process that started this one is gone (bin/serve's uvicorn)")

    def handle(self, *args, host: str, port: int, exit_with_parent: bool, **options) -> None:
        directory = settings.MOBKIT_METRICS_DIR
        if directory is None or not directory.is_dir():
            raise CommandError("PROMETHEUS_MULTIPROC_DIR must name the directory the server processes write "
                               "their metrics to (bin/serve sets it)")
        try:
            server = metrics_server(host, port, directory)
        except OSError as error:
            raise CommandError(f"metrics: cannot listen on {host}:{port}: {error}") from None
        if exit_with_parent:
            threading.Thread(target=_stop_with_parent, args=(server, os.getppid()), daemon=True).start()
        logger.info("metrics: serving http://%s:%d%s", host, port, METRICS_PATH)
        with server:
            server.serve_forever()


def _stop_with_parent(server, parent: int) -> None:
    # An orphan is adopted by another process: the parent it had is gone.
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    server.shutdown()
