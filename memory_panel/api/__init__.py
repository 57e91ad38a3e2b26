"""The panel's JSON-RPC methods as plain functions: ``handler(params, *, access) -> result``.

The app defines them; the project's JSON-RPC endpoint registers ``METHODS`` (see
``mobkit_console/rpc/apps.py``), so the domain never imports a transport. Handlers raise the
domain's errors (``memory_panel/errors.py``), which the endpoint maps to MobKit's codes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mobkit_console.access.caller import Access

Handler = Callable[..., dict[str, Any]]


def always(access: Access) -> bool:
    return True


@dataclass(frozen=True)
class ApiMethod:
    name: str
    handler: Handler
    # Whether mobkit/capabilities lists the method for this caller (docs/wire-contract.md §1.1).
    advertised: Callable[[Access], bool] = always


def all_methods() -> tuple[ApiMethod, ...]:
    from memory_panel.api import ledger, panel, search

    return (*panel.METHODS, *ledger.METHODS, *search.METHODS)
