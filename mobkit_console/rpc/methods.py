"""Console-wide methods: capabilities and MobKit's access methods (docs/access.md §2.6).

The console reads access.toml and never writes it: of MobKit's access methods it serves
``status``, ``get`` and ``preview``; ``set``, ``enable``, ``rules/*`` and ``groups/*`` stay
unregistered, so they answer -32601 like any unknown method.
"""

from __future__ import annotations

from typing import Any

from access.caller import Access, Caller, access_as, access_status, can_read_access
from memory_panel.errors import AccessDenied
from memory_panel.wire.access import access_config_json, preview_json, preview_params
from mobkit_console.rpc.errors import ACCESS_UNAVAILABLE, RpcError
from mobkit_console.rpc.registry import method_names_for, rpc_method


@rpc_method("mobkit/capabilities")
def capabilities(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    return {"methods": method_names_for(access)}


@rpc_method("mobkit/access/status")
def access_status_method(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    return access_status(access)


def _may_read_access_config(access: Access) -> bool:
    return access.available and can_read_access(access)


def _require_access_reader(access: Access) -> None:
    """MobKit's order: no controller is -32004 before any grant is asked; then access.admin (§2.5)."""
    if not access.available:
        raise RpcError(
            ACCESS_UNAVAILABLE, "access control is not configured on this runtime", {"kind": "access_unavailable"}
        )
    if not can_read_access(access):
        raise AccessDenied("access.admin", None)


@rpc_method("mobkit/access/get", advertised=_may_read_access_config)
def access_get(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    _require_access_reader(access)
    return {"config": access_config_json(access.config), "revision": access.revision}


@rpc_method("mobkit/access/preview", advertised=_may_read_access_config)
def access_preview(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    _require_access_reader(access)
    asked = preview_params(params)
    previewed = access_as(access, Caller(subject=asked.subject))
    explanation = previewed.explain(asked.action, asked.identity)
    return preview_json(
        asked,
        allowed=explanation.allowed,
        reason=explanation.reason,
        groups=sorted(previewed.groups),
        is_admin=previewed.is_admin,
    )
