"""ASGI entry point: HTTP through Django, WebSockets through Channels.

``application`` is what daphne and runserver serve: it also starts the process's embedded realm
follower on its first request (mobkit_console/timeline/follower.py). ``console_application`` is the
same routing without it, for tests that drive the app in their own process.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mobkit_console.settings")
django_asgi_app = get_asgi_application()

# These imports need Django set up first.
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import re_path  # noqa: E402

from mobkit_console.accounts.channels import TokenAuthMiddleware  # noqa: E402
from mobkit_console.timeline.follower import FollowRealmsMiddleware  # noqa: E402
from mobkit_console.timeline.routing import http_urlpatterns as timeline_http  # noqa: E402
from mobkit_console.timeline.routing import websocket_urlpatterns as timeline_sockets  # noqa: E402

console_application = ProtocolTypeRouter(
    {
        "http": URLRouter([*timeline_http, re_path(r"", django_asgi_app)]),
        "websocket": TokenAuthMiddleware(URLRouter(timeline_sockets)),
    }
)
application = FollowRealmsMiddleware(console_application)
