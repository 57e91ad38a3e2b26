from django.urls import path

from .consumers import EventsConsumer, IngestConsumer, TimelineConsumer

# Served before Django's URLs (mobkit_console/asgi.py): the runtime's pushes skip Django's handler.
http_urlpatterns = [
    path("console/events", IngestConsumer.as_asgi(), name="console-events"),
]

websocket_urlpatterns = [
    path("ws/console/events/", EventsConsumer.as_asgi()),
    path("ws/console/timeline/", TimelineConsumer.as_asgi()),
]
