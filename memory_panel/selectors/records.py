"""Records: one keyset page of the rows the caller may read, newest first (docs/store-format.md §5.1).

The JSON-RPC method and the HTML Records page both call ``record_list``, so ordering, cursor and
visibility have one implementation (docs/wire-contract.md §1.2, docs/access.md §2.4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from django.db.models.expressions import RawSQL

from memory_panel.cursor import ORDER_MS, Cursor, keyset_predicate
from memory_panel.errors import UnknownRealm
from memory_panel.models import Record
from memory_panel.store.all_realms_index import AllRealmsIndex, all_realms_index
from memory_panel.store.realm_index import RealmIndex, realm_index
from memory_panel.store.realms import realm_alias, realm_names
from memory_panel.store.records import MemoryRecord, decode_record
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.rows import (
    filtered_list_rows,
    realm_rows,
    records_in_place,
    skip_unreadable_realm,
)
from memory_panel.visibility import record_visible, require_record_list, scope_checker

if TYPE_CHECKING:
    from access.caller import Access

# Rows read per round trip while filling a page with rows the caller may see.
FILL_BATCH_MIN = 64
# Most index keys read in one round trip while scope grants hide most of them.
INDEX_BATCH_MAX = 4096

@dataclass(frozen=True)
class RecordPage:
    records: list[MemoryRecord]
    next_cursor: Cursor | None
    realms: list[str]


def record_list(
    *,
    access: Access,
    realm: str | None,
    filters: RecordFilter,
    limit: int,
    cursor: Cursor | None,
) -> RecordPage:
    """One keyset page, newest first, holding only rows the caller may see.

    Two deliberate improvements over MobKit with the same wire format: hidden rows never consume
    the page (each realm is read until it yields ``limit + 1`` visible rows), and the cursor
    pages through several realms merged in (updated_at_ms, id) order.
    """
    require_record_list(access, scope_kind=filters.scope_kind, scope_key=filters.scope_key)
    if realm is None:
        rows, realms = _all_realm_rows(access, filters, cursor, limit + 1)
    else:
        rows, realms = realm_rows(realm, lambda name: _visible_rows(access, name, filters, cursor, limit + 1))
    rows.sort(key=lambda r: (r.updated_at_ms, r.id), reverse=True)
    page = rows[:limit]
    next_cursor = Cursor.after(page[-1]) if len(rows) > limit else None
    return RecordPage(page, next_cursor, realms)


def _all_realm_rows(
    access: Access, filters: RecordFilter, cursor: Cursor | None, want: int
) -> tuple[list[MemoryRecord], list[str]]:
    """Up to ``want`` visible rows of every realm after ``cursor``, and the realms they span.

    The small realms answer from one console-wide index (docs/realm-index.md §10), so their number
    costs nothing; each realm that index does not hold (a large one, with an index of its own)
    is read as when asked for alone.
    """
    names = realm_names()
    index = all_realms_index(names, on_failure=skip_unreadable_realm)
    rows = _listed_rows(access, index, filters.for_caller(access), cursor, want)
    unlisted = [name for name in names if name not in index.listed]
    others, realms = realm_rows(None, lambda name: _visible_rows(access, name, filters, cursor, want), names=unlisted)
    return rows + others, sorted([*index.listed, *realms])


def _listed_rows(
    access: Access, index: AllRealmsIndex, filters: RecordFilter, cursor: Cursor | None, want: int
) -> list[MemoryRecord]:
    """Up to ``want`` visible rows of the realms the console-wide index holds, newest first.

    As a realm index's chunks (``_index_chunk``): entries of scopes the caller may not read are
    skipped, and the key batch doubles while they hide most of it. The rows come from the index too
    (docs/realm-index.md §10): no realm file is opened for them.
    """
    scope_ok = scope_checker(access)
    visible: list[MemoryRecord] = []
    position = cursor
    batch = want
    while len(visible) < want:
        entries = index.page_entries(filters, position, batch)
        readable = [entry for entry in entries if scope_ok(entry.scope_kind, entry.scope_key)]
        for record in index.records(readable):
            if record_visible(access, record):
                visible.append(record)
                if len(visible) == want:
                    break
        if len(entries) < batch:
            break
        position = Cursor(entries[-1].updated_at_ms, entries[-1].memory_id)
        batch = min(batch * 2, INDEX_BATCH_MAX)
    return visible


def _visible_rows(
    access: Access,
    realm: str,
    filters: RecordFilter,
    cursor: Cursor | None,
    want: int,
) -> list[MemoryRecord]:
    """Up to ``want`` visible rows of one realm after ``cursor``, reading on past hidden rows."""
    try:
        alias = realm_alias(realm)
    except UnknownRealm:
        return []  # the file went away since discovery: nothing to show for it
    filters = filters.for_caller(access)
    # docs/realm-index.md §7: one scope's rows the store's own scope index finds, index or not.
    one_scope = None
    if filters.scope_kind is not None and filters.scope_key is not None:
        one_scope = (filters.scope_kind, filters.scope_key)
    index = realm_index(realm, ordering_serves=_ordering_serves(filters), direct_scope=one_scope)
    scope_ok = scope_checker(access)
    seeks = _few_readable_scopes(index, filters, scope_ok) if index is not None else filters
    if seeks.scopes is not None and not index.complete:
        index = realm_index(realm)  # one seek per scope needs the complete index
    if index is not None:
        next_chunk = partial(_index_chunk, index, alias, realm, seeks, scope_ok)
    else:
        next_chunk = partial(_direct_chunk, filtered_list_rows(alias, realm, filters), realm)
    # Hidden rows make a direct read overshoot; index chunks already hold only readable scopes.
    batch = max(want, FILL_BATCH_MIN) if access.enforced and index is None else want
    visible: list[MemoryRecord] = []
    position = cursor
    while len(visible) < want:
        chunk, position = next_chunk(position, batch)
        for record in chunk:
            if record_visible(access, record):
                visible.append(record)
                if len(visible) == want:
                    break
        if position is None:
            break
    return visible


def _ordering_serves(filters: RecordFilter) -> bool:
    """docs/realm-index.md §5: a first-stage index walks the records order alone, where kind, trust,
    hidden scope kinds and reviewer-only rows are row filters, as on the complete one; a scope or
    status filter seeks an index only the complete one has."""
    return filters.scope_kind is None and filters.scope_key is None and filters.status is None


def _direct_chunk(queryset, realm: str, after: Cursor | None, size: int) -> tuple[list[MemoryRecord], Cursor | None]:
    """The next rows straight from the realm file, and where the following chunk starts (None: end)."""
    if after is not None:
        # The keyset predicate is SQL of its own (memory_panel/cursor.py), shared with the index.
        sql, args = keyset_predicate(after, placeholder="%s", order_ms=ORDER_MS)
        queryset = queryset.extra(where=[sql], params=args)
    rows = list(queryset.order_by(RawSQL(ORDER_MS, []).desc(), "-memory_id")[:size])
    records = [decode_record(realm, row) for row in rows]
    more = len(rows) == size
    return records, Cursor.after(records[-1]) if more else None


def _index_chunk(
    index: RealmIndex,
    alias: str,
    realm: str,
    filters: RecordFilter,
    scope_ok: Callable[[str, str], bool],
    after: Cursor | None,
    size: int,
) -> tuple[list[MemoryRecord], Cursor | None]:
    """The next rows whose scope the caller may read: keys from the index, rows from the realm file.

    The index knows each entry's scope, so rows of scopes the caller may not read are skipped
    before any row is read from the realm (a reader granted one agent of many would otherwise
    decode a screenful of other agents' rows per visible one). The key batch doubles while
    scopes hide most of it.
    """
    keys: dict[str, int] = {}
    position = after
    batch = size
    while True:
        entries = index.page_entries(filters, position, batch)
        for updated_at_ms, memory_id, scope_kind, scope_key in entries:
            if scope_ok(scope_kind, scope_key):
                keys[memory_id] = updated_at_ms
                if len(keys) == size:  # stop at this entry: the next chunk starts right after it
                    return records_in_place(alias, realm, keys), Cursor(updated_at_ms, memory_id)
        if len(entries) < batch:
            return records_in_place(alias, realm, keys), None
        position = Cursor(*entries[-1][:2])
        batch = min(batch * 2, INDEX_BATCH_MAX)


# Up to this many readable scopes, a page seeks each scope's run of the index and merges them.
FEW_SCOPES = 64


def _few_readable_scopes(
    index: RealmIndex, filters: RecordFilter, scope_ok: Callable[[str, str], bool]
) -> RecordFilter:
    """``filters`` kept to the readable scopes when the caller may read only a few of several.

    The index then seeks each of those scopes' runs and merges them, never walking the others'.
    """
    if filters.scope_kind is not None and filters.scope_key is not None:
        return filters  # already one scope
    candidates = [scope for scope in index.scopes() if filters.admits_scope(*scope)]
    readable = [scope for scope in candidates if scope_ok(*scope)]
    return filters.within(readable) if len(readable) < len(candidates) and len(readable) <= FEW_SCOPES else filters


def list_claimant_ids(*, records: list[MemoryRecord]) -> set[str]:
    """List rows that are uncommitted claimants (as ``claimant_ids``), reading each prior once.

    A list row does not carry its prior's status, so the priors are fetched in one query per realm.
    """
    priors_by_realm: dict[str, set[str]] = {}
    for record in records:
        if record.supersedes:
            priors_by_realm.setdefault(record.realm, set()).add(record.supersedes)
    committed: dict[tuple[str, str], str | None] = {}
    for realm, prior_ids in priors_by_realm.items():
        rows = (
            Record.objects.using(realm_alias(realm))
            .filter(memory_id__in=prior_ids)
            .values_list("memory_id", "status_kind", "status_detail")
        )
        for memory_id, status, detail in rows:
            committed[(realm, memory_id)] = detail if status == "superseded" else None
    return {
        record.id
        for record in records
        if record.supersedes
        and (record.realm, record.supersedes) in committed
        and committed[(record.realm, record.supersedes)] != record.id
    }
