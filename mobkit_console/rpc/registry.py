"""The JSON-RPC method table: the console's own methods (``@rpc_method``) and each app's ``ApiMethod``s."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from memory_panel.api.method import ApiMethod, Handler, always

if TYPE_CHECKING:
    from access.caller import Access

_METHODS: dict[str, ApiMethod] = {}


def register_methods(methods: Iterable[ApiMethod]) -> None:
    """Register an app's methods (``memory_panel.api.all_methods()``) after the console's own."""
    for method in methods:
        if method.name in _METHODS:
            raise ValueError(f"JSON-RPC method registered twice: {method.name}")
        _METHODS[method.name] = method


def rpc_method(name: str, *, advertised: Callable[[Access], bool] = always) -> Callable[[Handler], Handler]:
    """Register ``handler(params: dict, *, access: Access) -> dict`` under ``name``."""

    def register(handler: Handler) -> Handler:
        register_methods([ApiMethod(name, handler, advertised)])
        return handler

    return register


def method_get(name: str) -> ApiMethod | None:
    return _METHODS.get(name)


def method_names() -> list[str]:
    """Every registered method, advertised or not (a caller may call an unadvertised one)."""
    return list(_METHODS)


def method_names_for(access: Access) -> list[str]:
    return [method.name for method in _METHODS.values() if method.advertised(access)]
