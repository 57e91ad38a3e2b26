"""One JSON-RPC method: its MobKit name, its handler, and who sees it advertised.

The one description of a method, whoever defines it: the panel's methods (``memory_panel.api``) and
the console's own (``mobkit_console.rpc.methods``) are registered as the same class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from access.caller import Access

Handler = Callable[..., dict[str, Any]]


def always(access: Access) -> bool:
    return True


@dataclass(frozen=True)
class ApiMethod:
    name: str
    handler: Handler
    # Whether mobkit/capabilities lists the method for this caller (docs/wire-contract.md §1.1).
    advertised: Callable[[Access], bool] = always
