"""How many rows a list holds for this caller: exact up to a cap, then "more than N" (docs/search.md §4).

Every count is answered by the console's search index (docs, scopes and tokens of each realm,
memory_panel/store/search_index.py) under the same visibility as the rows, so a count never
scans a realm file and never counts a row the caller may not read. The index stops counting at
``cap + 1``: the cost is bounded by the cap, not by the realm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_panel.search_text import SearchQuery
from memory_panel.selectors.search import search_filter
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.all_realms_index import all_realms_index
from memory_panel.store.rows import panel_realms, realm_read, skip_unreadable_realm
from memory_panel.store.search_index import search_index
from memory_panel.visibility import require_record_list, require_review

if TYPE_CHECKING:
    from access.caller import Access

# Measured at 1,000,000 records (README, Benchmarks): counting to 10,000 costs a few ms.
COUNT_CAP = 10_000


@dataclass(frozen=True)
class Count:
    """A capped count: exact up to ``cap``; beyond it, only "more than ``cap``"."""

    value: int
    cap: int

    @property
    def capped(self) -> bool:
        return self.value > self.cap


def record_count(
    *,
    access: Access,
    realm: str | None,
    filters: RecordFilter,
    query: SearchQuery | None = None,
    cap: int = COUNT_CAP,
) -> Count:
    """Rows the Records list (or its search, with ``query``) would show this caller, capped."""
    require_record_list(access, scope_kind=filters.scope_kind, scope_key=filters.scope_key)
    total = 0
    names = panel_realms(realm)
    if realm is None:
        # docs/realm-index.md §10: the small realms counted at once, in the console-wide index.
        shared = all_realms_index(names, on_failure=skip_unreadable_realm)
        where = search_filter(access, shared, filters)
        total = shared.search().count(query.match, where, cap) if query else shared.count(where, cap)
        names = [name for name in names if name not in shared.listed]
    for name in names:
        with realm_read(name, alone=realm is not None):  # a damaged realm is skipped, as by the list
            index = search_index(name)
            if index is None:
                continue
            where = search_filter(access, index, filters)
            left = cap - total
            total += index.count(query.match, where, left) if query else index.count_docs(where, left)
        if total > cap:
            break
    return Count(min(total, cap + 1), cap)


def quarantine_count(*, access: Access, realm: str | None, cap: int = COUNT_CAP) -> Count:
    """The quarantine queue's length for a reviewer (the queue itself is reviewers' only)."""
    require_review(access)
    return record_count(access=access, realm=realm, filters=RecordFilter(status="quarantined"), cap=cap)
