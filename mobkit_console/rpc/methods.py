"""Console-wide methods: capabilities and access status."""

from __future__ import annotations

from typing import Any

from access.caller import Access, access_status
from mobkit_console.rpc.registry import method_names_for, rpc_method


@rpc_method("mobkit/capabilities")
def capabilities(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    return {"methods": method_names_for(access)}


@rpc_method("mobkit/access/status")
def access_status_method(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    return access_status(access)
