from django.apps import AppConfig


class MemoryPanelConfig(AppConfig):
    name = "memory_panel"
    verbose_name = "MobKit memory panel"
