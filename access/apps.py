from __future__ import annotations

from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "access"
    label = "access"
    verbose_name = "MobKit access control"

    def ready(self) -> None:
        # An invalid access.toml stops the server with MobKit's validation message instead of
        # silently serving with no (or the wrong) access control.
        from .config import load_access_config_at_startup

        load_access_config_at_startup()
