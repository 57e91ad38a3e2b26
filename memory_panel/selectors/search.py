"""Search: the records matching a query, best first, in every realm the caller may read (docs/search.md).

The JSON-RPC method, the Records page (``?q=``) and the exports call these functions, so a
match, its order and its visibility have one implementation. Visibility is the records rule
(docs/access.md §2.4), applied inside the index query: a row the caller may not read is never
matched, counted or quoted in a snippet.
"""

from __future__ import annotations

import hashlib
import heapq
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING

from memory_panel.cursor import SearchCursor
from memory_panel.search_text import SearchQuery, highlight, snippet
from memory_panel.signals import require_body_read_recorded
from memory_panel.store.all_realms_index import AllRealmsIndex, all_realms_index
from memory_panel.store.realms import realm_alias, realm_names
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.records import MemoryRecord
from memory_panel.store.rows import realm_read, realm_rows, records_by_id, skip_unreadable_realm
from memory_panel.store.search_index import FullTextIndex, Hit, search_index
from memory_panel.visibility import record_visible, require_record_list, scope_checker

if TYPE_CHECKING:
    from access.caller import Access

# SQLite binds at most 32766 parameters; a scope list is two per scope.
MAX_LISTED_SCOPES = 8000


@dataclass(frozen=True)
class SearchResult:
    record: MemoryRecord
    score: float  # higher is better: bm25 negated, as callers expect of a score
    snippet: str  # plain text, matches between MARK_START and MARK_END
    title: str  # the title with its matches marked the same way (HTML rows only)


@dataclass(frozen=True)
class SearchPage:
    results: list[SearchResult]
    next_cursor: SearchCursor | None
    realms: list[str]

    @property
    def records(self) -> list[MemoryRecord]:
        """The matched rows in result order, as a records page holds them."""
        return [result.record for result in self.results]


def query_digest(query: SearchQuery, filters: RecordFilter, realm: str | None) -> str:
    """What a search cursor is bound to: a cursor resumes only the walk that produced it."""
    key = repr((query.terms, filters, realm, *([filters.author] if filters.author is not None else [])))
    return hashlib.blake2b(key.encode(), digest_size=6).hexdigest()


def record_search(
    *,
    access: Access,
    realm: str | None,
    query: SearchQuery,
    filters: RecordFilter,
    limit: int,
    cursor: SearchCursor | None,
) -> SearchPage:
    """One page of matches best first (ties newest first), merged over the realms searched."""
    require_record_list(access, scope_kind=filters.scope_kind, scope_key=filters.scope_key)
    # A realm whose file cannot be read is skipped and named, or refused when asked for alone
    # (docs/realm-failures.md §1), exactly as panel/records does.
    indexes, realms = _search_indexes(realm)
    if cursor is not None:
        shift = cursor.window_shift
        after = Hit(cursor.window, cursor.bm25, cursor.updated_at_ms, cursor.memory_id)
    else:
        # One window size for every realm searched, so their windows merge in one order.
        shifts = [s for _, index in indexes if (s := index.window_shift(query.match)) is not None]
        shift, after = (min(shifts) if shifts else None), None
    per_realm = [
        [(hit, hit.realm or name) for hit in index.hits(query.match, search_filter(access, index, filters), after, limit + 1, shift)]
        for name, index in indexes
    ]
    merged = list(islice(heapq.merge(*per_realm, key=_order, reverse=True), limit + 1))
    page = merged[:limit]
    next_cursor = None
    if len(merged) > limit:
        last = page[-1][0]
        next_cursor = SearchCursor(
            last.bm25, last.updated_at_ms, last.memory_id, query_digest(query, filters, realm), shift, last.window
        )
    return SearchPage(_results(access, query, page, alone=realm is not None), next_cursor, realms)


def _search_indexes(realm: str | None) -> tuple[list[tuple[str, FullTextIndex]], list[str]]:
    """The indexes a search reads, each with the realm it stands for, and the realms they cover.

    docs/realm-index.md §10: across realms, the small realms are searched together, in one query of
    the console-wide index; each other realm in its own search index.
    """
    names = None
    indexes: list[tuple[str, FullTextIndex]] = []
    covered: list[str] = []
    if realm is None:
        every = realm_names()
        shared = all_realms_index(every, on_failure=skip_unreadable_realm)
        if shared.listed:
            indexes.append(("", shared.search()))
            covered = list(shared.listed)
        names = [name for name in every if name not in shared.listed]
    own, realms = realm_rows(
        realm, lambda name: [(name, index)] if (index := search_index(name)) is not None else [], names=names
    )
    return indexes + own, sorted([*covered, *realms])


def _order(pair: tuple[Hit, str]) -> tuple[int, float, int, str]:
    # Descending: newest window, best (lowest) bm25, newest update, larger id — each realm's order.
    hit = pair[0]
    return (hit.window, -hit.bm25, hit.updated_at_ms, hit.memory_id)


def search_filter(access: Access, index: FullTextIndex | AllRealmsIndex, filters: RecordFilter) -> RecordFilter:
    """``filters`` for this caller in this index: what it may never see, and only the scopes it may read."""
    filters = filters.for_caller(access)
    if not access.enforced:
        return filters
    scope_ok = scope_checker(access)
    candidates = [scope for scope in index.scopes() if filters.admits_scope(*scope)]
    readable = [scope for scope in candidates if scope_ok(*scope)]
    if len(readable) == len(candidates):
        return filters
    # Past what SQLite can bind, the surplus scopes are left out: too little, never too much.
    return filters.within(readable[:MAX_LISTED_SCOPES])


def _results(access: Access, query: SearchQuery, page: list[tuple[Hit, str]], *, alone: bool) -> list[SearchResult]:
    """The page's rows read from their realm files, each checked once more as records are."""
    by_realm: dict[str, list[str]] = {}
    for hit, name in page:
        by_realm.setdefault(name, []).append(hit.memory_id)
    rows: dict[tuple[str, str], MemoryRecord] = {}
    for name, ids in by_realm.items():
        with realm_read(name, alone=alone):
            for record in records_by_id(realm_alias(name), name, ids, with_body=True):
                rows[(name, record.id)] = record
    results = []
    for hit, name in page:
        record = rows.get((name, hit.memory_id))
        if record is None or not record_visible(access, record):
            continue  # gone, or changed since the index was caught up: the realm file decides
        results.append(
            SearchResult(
                record=record,
                score=-hit.bm25,
                snippet=snippet(query, title=record.title, body=record.body or "", tags=record.tags),
                title=highlight(record.title, query),
            )
        )
    # A snippet quotes the body: a reviewer's quarantined match is a quarantined body read.
    require_body_read_recorded(access=access, records=[result.record for result in results])
    return results
