"""Records in the utility order (docs/panel-tabs.md §3), keyset-paged over the whole store.

MobKit sorts the loaded page in the browser; here the order is each record's utility key
(``memory_panel/cursor.py``), read from the realm index's ``utility`` table for large realms, so a
page at 90% depth costs what the first does. Same filters, visibility and page-fill rule as
``records.record_list``.
"""

from __future__ import annotations

import heapq
from itertools import islice
from typing import TYPE_CHECKING

from memory_panel.cursor import UtilityCursor
from memory_panel.store.realm_index import realm_index
from memory_panel.store.realms import realm_alias
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.records import MemoryRecord
from memory_panel.store.rows import realm_cursor, realm_rows, records_by_id
from memory_panel.store.utility import utility_rows
from memory_panel.selectors.records import RecordPage
from memory_panel.visibility import record_visible, require_record_list, scope_checker

if TYPE_CHECKING:
    from access.caller import Access

INDEX_BATCH_MAX = 4096


def record_list_by_utility(
    *, access: Access, realm: str | None, filters: RecordFilter, limit: int, cursor: UtilityCursor | None
) -> RecordPage:
    """One page in the utility order, holding only rows the caller may see; realms merged by key."""
    require_record_list(access, scope_kind=filters.scope_kind, scope_key=filters.scope_key)
    filters = filters.for_caller(access)
    # One sorted run per realm; a realm that cannot be read is skipped and named (docs/realm-failures.md §1).
    per_realm, realms = realm_rows(realm, lambda name: [_visible(access, name, filters, cursor, limit + 1)])
    merged = list(islice(heapq.merge(*per_realm, key=lambda pair: pair[0]), limit + 1))
    page = [record for _, record in merged[:limit]]
    next_cursor = UtilityCursor(merged[limit - 1][0]) if len(merged) > limit else None
    return RecordPage(page, next_cursor, realms)


def _visible(
    access: Access, realm: str, filters: RecordFilter, cursor: UtilityCursor | None, want: int
) -> list[tuple[str, MemoryRecord]]:
    """Up to ``want`` (key, record) pairs of one realm after ``cursor``, in the utility order."""
    scope_ok = scope_checker(access)
    index = realm_index(realm)
    after = cursor.key if cursor is not None else None
    out: list[tuple[str, MemoryRecord]] = []
    batch = want
    while len(out) < want:
        if index is not None:
            entries = index.utility_entries(filters, after, batch)
        else:
            entries = _direct_entries(realm, filters, after, batch)
        keys = {memory_id: key for key, memory_id, kind, scope_key in entries if scope_ok(kind, scope_key)}
        records = records_by_id(realm_alias(realm), realm, list(keys))
        out += [(keys[r.id], r) for r in records if record_visible(access, r)]
        if len(entries) < batch:
            break
        after = entries[-1][0]
        batch = min(batch * 2, INDEX_BATCH_MAX)
    return out[:want]


def _direct_entries(
    realm: str, filters: RecordFilter, after: str | None, limit: int
) -> list[tuple[str, str, str, str]]:
    """The utility order of a realm without an index: every key computed, the next ``limit`` kept."""
    rows = (
        (key, memory_id, kind, scope_key)
        for key, memory_id, kind, scope_key, status, record_kind, trust, author in utility_rows(realm_cursor(realm))
        if (after is None or key > after) and filters.admits(kind, scope_key, status, record_kind, trust, author)
    )
    return heapq.nsmallest(limit, rows)
