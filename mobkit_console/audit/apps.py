from __future__ import annotations

from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "mobkit_console.audit"
    label = "audit"
    verbose_name = "Access audit log"

    def ready(self) -> None:
        from . import receivers

        receivers.connect()
