"""JSON-RPC methods for the ledger and the recall preview: parse params, call one selector, shape.

``mobkit/memory/index`` is MobKit's only ledger write; the console is read-only, so it answers
with the read-only refusal and is not advertised (spec console-panel-and-access §1.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_panel.ledger import ledger_query, ledger_stores, parse_ledger_filters
from memory_panel.recall import parse_recall_request, recall_preview
from mobkit_console.rpc.errors import read_only
from mobkit_console.rpc.registry import rpc_method

if TYPE_CHECKING:
    from mobkit_console.access.caller import Access


def _may_read_ledger(access: Access) -> bool:
    # The ledger gate is resource-less, so a caller it always denies does not see the methods.
    return access.allows("agent.memory.read")


def _never(access: Access) -> bool:
    return False


@rpc_method("mobkit/memory/query", advertised=_may_read_ledger)
def memory_query(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    return ledger_query(access=access, filters=parse_ledger_filters(params))


@rpc_method("mobkit/memory/stores", advertised=_may_read_ledger)
def memory_stores(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    return {"stores": ledger_stores(access=access)}


@rpc_method("mobkit/memory/index", advertised=_never)
def memory_index(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    raise read_only()


# Agent-scoped, so listed for everyone; the identity is checked per call (spec §1.1).
@rpc_method("mobkit/memory/panel/recall_preview")
def panel_recall_preview(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    return recall_preview(access=access, request=parse_recall_request(params)).as_json()
