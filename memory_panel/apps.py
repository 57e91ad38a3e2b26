from django.apps import AppConfig


class MemoryPanelConfig(AppConfig):
    name = "memory_panel"
    verbose_name = "MobKit memory panel"

    def ready(self) -> None:
        from memory_panel import rpc  # noqa: F401  (registers the mobkit/memory/panel/* methods)
        from memory_panel import rpc_ledger  # noqa: F401  (ledger methods and the recall preview)
