from django.apps import AppConfig


class RpcConfig(AppConfig):
    name = "mobkit_console.rpc"
    label = "rpc"
    verbose_name = "JSON-RPC endpoint"

    def ready(self) -> None:
        from memory_panel.api import all_methods
        from mobkit_console.rpc import methods  # noqa: F401  (registers the console-wide methods)
        from mobkit_console.rpc.registry import register_methods

        register_methods(all_methods())
