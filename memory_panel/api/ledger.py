"""Methods for the operational ledger and the recall preview: parse params, call one selector, shape.

``mobkit/memory/index`` is MobKit's only ledger write; the console is read-only, so it answers
with the read-only refusal and is not advertised (docs/wire-contract.md §1.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_panel.api.method import ApiMethod, always
from memory_panel.errors import ReadOnly
from memory_panel.selectors.ledger import ledger_query, ledger_stores, parse_ledger_filters
from memory_panel.selectors.recall import parse_recall_request, recall_preview
from memory_panel.visibility import may_read_ledger

if TYPE_CHECKING:
    from access.caller import Access


def _never(access: Access) -> bool:
    return False


def memory_query(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    return ledger_query(access=access, filters=parse_ledger_filters(params))


def memory_stores(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    return {"stores": ledger_stores(access=access)}


def memory_index(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    raise ReadOnly()


def panel_recall_preview(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    return recall_preview(access=access, request=parse_recall_request(params)).as_json()


METHODS = (
    # The ledger gate is resource-less, so a caller it always denies does not see the methods.
    ApiMethod("mobkit/memory/query", memory_query, may_read_ledger),
    ApiMethod("mobkit/memory/stores", memory_stores, may_read_ledger),
    ApiMethod("mobkit/memory/index", memory_index, _never),
    # Agent-scoped, so listed for everyone; the identity is checked per call (docs/wire-contract.md §1.1).
    ApiMethod("mobkit/memory/panel/recall_preview", panel_recall_preview, always),
)
