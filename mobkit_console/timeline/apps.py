from __future__ import annotations

from django.apps import AppConfig


class TimelineConfig(AppConfig):
    name = "mobkit_console.timeline"
    label = "timeline"
    verbose_name = "Memory event timeline"

    def ready(self) -> None:
        from memory_panel.signals import demo_realms_seeded

        from .watcher import realm_history_store

        def store_seeded_history(*, realms: list[str], **_: object) -> str:
            stored = sum(realm_history_store(realm=realm) for realm in realms)
            return f"put {stored} events of their history on the timeline"

        demo_realms_seeded.connect(store_seeded_history, dispatch_uid="timeline-seeded-history", weak=False)
