from django.apps import AppConfig


class MemoryPanelConfig(AppConfig):
    """The memory panel app. Its JSON-RPC methods (``memory_panel.api``) are registered by the
    project's endpoint, and its URLs included by the project's URLconf (README "Architecture")."""

    name = "memory_panel"
    verbose_name = "MobKit memory panel"
