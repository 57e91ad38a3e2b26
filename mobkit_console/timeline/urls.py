from django.urls import path

from . import views

urlpatterns = [
    path("console/events/stream", views.event_stream, name="console-event-stream"),
    path("console/timeline/", views.timeline_page, name="console-timeline"),
]
