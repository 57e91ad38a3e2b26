from __future__ import annotations

from django.apps import AppConfig


class TimelineConfig(AppConfig):
    name = "mobkit_console.timeline"
    label = "timeline"
    verbose_name = "Memory event timeline"
