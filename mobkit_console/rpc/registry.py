"""The JSON-RPC method table. Apps register methods with ``@rpc_method`` at import time."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from memory_panel.api.method import ApiMethod
    from access.caller import Access

Handler = Callable[..., dict[str, Any]]
Advertised = Callable[["Access"], bool]


@dataclass(frozen=True)
class RpcMethod:
    name: str
    handler: Handler
    # Whether mobkit/capabilities lists the method for this caller (docs/wire-contract.md §1.1 "Advertisement").
    advertised: Advertised


_METHODS: dict[str, RpcMethod] = {}


def _always(access: Access) -> bool:
    return True


def rpc_method(name: str, *, advertised: Advertised = _always) -> Callable[[Handler], Handler]:
    """Register ``handler(params: dict, *, access: Access) -> dict`` under ``name``."""

    def register(handler: Handler) -> Handler:
        if name in _METHODS:
            raise ValueError(f"JSON-RPC method registered twice: {name}")
        _METHODS[name] = RpcMethod(name, handler, advertised)
        return handler

    return register


def register_methods(methods: Iterable[ApiMethod]) -> None:
    """Register an app's methods (``memory_panel.api.all_methods()``) after the console's own."""
    for method in methods:
        rpc_method(method.name, advertised=method.advertised)(method.handler)


def method_get(name: str) -> RpcMethod | None:
    return _METHODS.get(name)


def method_names() -> list[str]:
    """Every registered method, advertised or not (a caller may call an unadvertised one)."""
    return list(_METHODS)


def method_names_for(access: Access) -> list[str]:
    return [method.name for method in _METHODS.values() if method.advertised(access)]
