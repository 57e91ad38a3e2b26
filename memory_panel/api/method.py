"""One JSON-RPC method of the panel: its MobKit name, its handler, and who sees it advertised."""

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
