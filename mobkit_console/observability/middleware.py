"""Each request's id, log context and HTTP metrics (docs/serving.md §8)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from mobkit_console.observability import metrics
from mobkit_console.observability.logs import REALM_LOGGED_CHARS, request_context_bind, request_context_start

REQUEST_ID_HEADER = "X-Request-ID"
# An id the client or a proxy sent is kept when it is short and plain (it is logged and sent
# back); anything else is replaced by one made here.
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}")
STATIC_ROUTE = "static"


def request_id_for(sent: str | None) -> str:
    """The id a request is known by: the one it carried when sane, else a new one."""
    if sent is not None and _SANE_REQUEST_ID.fullmatch(sent):
        return sent
    return uuid.uuid4().hex


class RequestObservabilityMiddleware:
    """First of the middlewares: every response carries ``X-Request-ID`` (a refusal or a static file
    too), every line the request logs carries its id, and Django's whole answer is timed.

    The subject and the realm are added in ``process_view``, which Django runs after every
    middleware's ``__call__``, so ``CallerMiddleware`` has named the caller by then. The subject
    goes into logs only, never into a metric label.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.measured = settings.MOBKIT_METRICS_DIR is not None
        self.static_prefix = "/" + settings.STATIC_URL.lstrip("/")

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_for(request.headers.get(REQUEST_ID_HEADER))
        request_context_start(request_id)
        started = time.perf_counter()
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        if self.measured:
            route = self._route(request)
            method = metrics.http_method_label(request.method)
            metrics.http_requests.labels(route, method, str(response.status_code)).inc()
            metrics.http_request_duration.labels(route).observe(time.perf_counter() - started)
        return response

    def process_view(self, request: HttpRequest, view: Callable, args: tuple, kwargs: dict) -> None:
        caller = getattr(request, "caller", None)
        if caller is not None and caller.is_signed_in:
            request_context_bind(subject=caller.subject)
        realm = request.GET.get("realm")
        if realm:
            request_context_bind(realm=realm[:REALM_LOGGED_CHARS])

    def _route(self, request: HttpRequest) -> str:
        """The URL pattern's name, never the path (ids and realms are in paths)."""
        match = request.resolver_match
        if match is not None:
            return match.view_name
        return STATIC_ROUTE if request.path.startswith(self.static_prefix) else metrics.UNMATCHED_ROUTE
