from django.apps import AppConfig


class RpcConfig(AppConfig):
    name = "mobkit_console.rpc"
    label = "rpc"
    verbose_name = "JSON-RPC endpoint"
