from django.urls import path

from .consumers import EventsConsumer, TimelineConsumer

websocket_urlpatterns = [
    path("ws/console/events/", EventsConsumer.as_asgi()),
    path("ws/console/timeline/", TimelineConsumer.as_asgi()),
]
