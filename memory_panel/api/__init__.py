"""The panel's JSON-RPC methods as plain functions: ``handler(params, *, access) -> result``.

The app defines them; the project's JSON-RPC endpoint registers ``all_methods()`` (see
``mobkit_console/rpc/apps.py``), so the domain never imports a transport. Handlers raise the
domain's errors (``memory_panel/errors.py``), which the endpoint maps to MobKit's codes.
"""

from __future__ import annotations

from memory_panel.api.method import ApiMethod


def all_methods() -> tuple[ApiMethod, ...]:
    """Every method the app defines, in the order ``mobkit/capabilities`` lists them."""
    from memory_panel.api import ledger, panel, search

    return (*panel.METHODS, *ledger.METHODS, *search.METHODS)
