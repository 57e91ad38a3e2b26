"""``mobkit/memory/panel/search``: the console's full-text search (docs/search.md, docs/wire-contract.md)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memory_panel.api.method import ApiMethod
from memory_panel.api.panel import PANEL
from memory_panel.cursor import parse_search_cursor
from memory_panel.search_text import parse_query
from memory_panel.selectors import search
from memory_panel.signals import announce, records_searched
from memory_panel.wire.params import LISTS_DEFAULT_LIMIT, LISTS_MAX_LIMIT, parse_limit, parse_realm, record_filter
from memory_panel.wire.results import search_result_json

if TYPE_CHECKING:
    from access.caller import Access


def panel_search(params: dict[str, Any], *, access: Access) -> dict[str, Any]:
    query = parse_query(params.get("query"))
    realm = parse_realm(params.get("realm"))
    filters = record_filter(params)
    if filters.status is None:  # the contract: status defaults to active
        filters = replace(filters, status="active")
    announce(records_searched, access=access, realm=realm, query=query.text, surface="rpc")
    page = search.record_search(
        access=access,
        realm=realm,
        query=query,
        filters=filters,
        limit=parse_limit(params.get("limit"), default=LISTS_DEFAULT_LIMIT, maximum=LISTS_MAX_LIMIT),
        cursor=parse_search_cursor(params.get("cursor"), query_digest=search.query_digest(query, filters, realm)),
    )
    return {
        "records": [search_result_json(result) for result in page.results],
        "next_cursor": page.next_cursor.encode() if page.next_cursor else None,
        "realms": page.realms,
    }


METHODS = (ApiMethod(PANEL + "search", panel_search),)
