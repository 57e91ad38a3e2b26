"""A small OTLP/HTTP trace receiver on loopback: what a collector would be sent, decoded."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class OtlpReceiver:
    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.server = server
        self.requests: list[ExportTraceServiceRequest] = []
        self.lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> list:
        """Every span received so far, each with its resource's attributes as ``resource``."""
        with self.lock:
            requests = list(self.requests)
        return [span for request in requests for resource in request.resource_spans
                for scope in resource.scope_spans for span in scope.spans]

    def span_names(self) -> set[str]:
        return {span.name for span in self.spans()}

    def wait_for(self, names: set[str], timeout_s: float = 30) -> set[str]:
        deadline = time.monotonic() + timeout_s
        while not names <= self.span_names() and time.monotonic() < deadline:
            time.sleep(0.1)
        return self.span_names()


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    received: list[OtlpReceiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path == "/v1/traces":
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with received[0].lock:
                    received[0].requests.append(request)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    received.append(OtlpReceiver(server))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield received[0]
    finally:
        server.shutdown()
        server.server_close()
