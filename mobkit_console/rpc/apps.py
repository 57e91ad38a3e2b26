from django.apps import AppConfig


class RpcConfig(AppConfig):
    name = "mobkit_console.rpc"
    label = "rpc"
    verbose_name = "JSON-RPC endpoint"

    def ready(self) -> None:
        from mobkit_console.rpc import methods  # noqa: F401  (registers the console-wide methods)
