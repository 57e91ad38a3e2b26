"""ASGI entry point: what daphne, runserver and bin/serve's uvicorn workers serve.

Three handlers behind one routing table (docs/serving.md §2):

- pages and JSON-RPC go to Django's WSGI handler on a pool of ``MOBKIT_HTTP_THREADS`` threads
  (a2wsgi): a request runs its middleware and view on one thread, start to finish, where Django's
  ASGI handler would hop between threads several times and start a new one per request;
- the long-lived responses (the record exports, ``audit.ndjson`` and the SSE event stream) go to
  Django's ASGI handler: each gets a thread of its own (never one the pages need), and a client
  that goes away cancels its stream;
- event ingest and the WebSockets are Channels consumers;
- the probes ``/healthz`` and ``/readyz`` (mobkit_console/probes.py) are answered before Django,
  whatever the request's Host header, with no session, cookie, audit entry or log line.

``application`` also starts the process's embedded realm follower on its first request
(mobkit_console/timeline/follower.py). ``console_application`` is the same routing without it, for
tests that drive the app in their own process.
"""

import os

from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mobkit_console.settings")
django_asgi_app = get_asgi_application()

# These imports need Django set up first.
from a2wsgi import WSGIMiddleware  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import re_path  # noqa: E402

from mobkit_console import probes  # noqa: E402
from mobkit_console.accounts.channels import TokenAuthMiddleware  # noqa: E402
from mobkit_console.serving import with_content_length  # noqa: E402
from mobkit_console.timeline.follower import FollowRealmsMiddleware  # noqa: E402
from mobkit_console.timeline.routing import http_urlpatterns as timeline_http  # noqa: E402
from mobkit_console.timeline.routing import websocket_urlpatterns as timeline_sockets  # noqa: E402

pages_app = with_content_length(WSGIMiddleware(get_wsgi_application(), workers=settings.MOBKIT_HTTP_THREADS))

console_application = ProtocolTypeRouter(
    {
        "http": URLRouter([
            re_path(r"^healthz$", probes.healthz),
            re_path(r"^readyz$", probes.readyz),
            *timeline_http,
            re_path(r"^console/events/stream$", django_asgi_app),
            re_path(r"^console/memory/records\.(?:csv|ndjson)$", django_asgi_app),
            re_path(r"^console/audit\.ndjson$", django_asgi_app),
            re_path(r"", pages_app),
        ]),
        "websocket": TokenAuthMiddleware(URLRouter(timeline_sockets)),
    }
)
application = FollowRealmsMiddleware(console_application)
