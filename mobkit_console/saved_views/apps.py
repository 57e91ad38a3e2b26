from __future__ import annotations

from django.apps import AppConfig


class SavedViewsConfig(AppConfig):
    name = "mobkit_console.saved_views"
    label = "saved_views"
    verbose_name = "Saved views"
