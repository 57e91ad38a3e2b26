"""Facets on Records: how many rows the current filter and search hold per value (docs/realm-index.md §11).

Counts are of rows the caller may list, decided exactly as ``record_visible`` decides a row
(docs/access.md §2.8): a counter is kept per scope, status, kind, trust, author kind and whether
the row is reviewer-only, so the caller's scope grants and review right apply to whole counters
and a hidden row is never counted. Without a search every count comes from those counters, kept by
each realm's search index as it catches up (the small realms' by the console-wide index, as it
copies them); a search counts its matches, within a CPU-time limit,
and a field that ran out is named in ``timed_out`` instead of showing a wrong number.
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory_panel import conf
from memory_panel.errors import RealmIndexing
from memory_panel.search_text import SearchQuery
from memory_panel.selectors.search import search_filter
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.all_realms_index import AllRealmsIndex, all_realms_index
from memory_panel.store.rows import panel_realms, realm_read, skip_unreadable_realm
from memory_panel.store.search_index import SearchIndex, search_index
from memory_panel.visibility import require_record_list, scope_checker

if TYPE_CHECKING:
    from access.caller import Access

# The facets, in the order the page and the JSON show them. Each but ``author`` and ``realm`` is a
# Records filter of the same name (``scope_kind`` is the ``scope`` parameter).
FACET_FIELDS = ("status", "kind", "scope_kind", "trust", "author", "realm")
# SQLite's progress handler is called every this many VM steps while a facet query runs.
PROGRESS_STEPS = 1_000


@dataclass
class Facets:
    """Per field, each value's count; ``timed_out`` the fields whose counts ran out of time."""

    counts: dict[str, Counter] = field(default_factory=lambda: {name: Counter() for name in FACET_FIELDS})
    timed_out: set[str] = field(default_factory=set)

    def values(self, name: str) -> list[tuple[str, int]]:
        """(value, count) of a field, largest first (ties by value), or [] when it timed out."""
        if name in self.timed_out:
            return []
        return sorted(self.counts[name].items(), key=lambda item: (-item[1], str(item[0])))


def record_facets(
    *, access: Access, realm: str | None, filters: RecordFilter, query: SearchQuery | None = None
) -> Facets:
    """The facets of what the Records list (or its search, with ``query``) would show this caller."""
    require_record_list(access, scope_kind=filters.scope_kind, scope_key=filters.scope_key)
    facets = Facets()
    deadline = _Deadline(conf.facets_timeout_ms() / 1000)
    names = panel_realms(realm)
    if realm is None:
        # docs/realm-index.md §10: the small realms' counters are kept together in the console-wide index.
        shared = all_realms_index(names, on_failure=skip_unreadable_realm)
        rows = _counter_rows(access, shared, filters, query, deadline)
        if rows is None:
            facets.timed_out.update(FACET_FIELDS)
        else:
            _add(facets, access, filters.for_caller(access), rows)
        names = [name for name in names if name not in shared.listed]
    for name in names:
        with realm_read(name, alone=realm is not None):  # a damaged realm is skipped, as by the list
            try:
                index = search_index(name)
            except RealmIndexing:
                if realm is not None:
                    raise
                facets.timed_out.update(FACET_FIELDS)  # a realm being indexed cannot be counted yet
                continue
            if index is None:
                continue
            rows = _counter_rows(access, index, filters, query, deadline)
            if rows is None:
                facets.timed_out.update(FACET_FIELDS)
                continue
            _add(facets, access, filters.for_caller(access), [(name, *row) for row in rows])
    return facets


def _counter_rows(
    access: Access,
    index: SearchIndex | AllRealmsIndex,
    filters: RecordFilter,
    query: SearchQuery | None,
    deadline: _Deadline,
) -> list[tuple] | None:
    """The index's counters, or its matches counted the same way; None when the time ran out."""
    if query is None:
        return index.facet_counters()
    if deadline.passed():
        return None  # spent on the realms before this one
    searched = index.search() if isinstance(index, AllRealmsIndex) else index
    try:
        with deadline.watching(index.conn):
            return searched.matched_facets(query.match, search_filter(access, index, filters))
    except sqlite3.OperationalError as error:
        if deadline.passed():
            return None
        raise error


def _add(facets: Facets, access: Access, filters: RecordFilter, rows: list[tuple]) -> None:
    """Add the counters (each led by its realm) ``filters`` keeps and the caller may list:
    ``record_visible`` per counter."""
    scope_ok = scope_checker(access)
    for realm, scope_kind, scope_key, status, kind, trust, author, reviewer_only, records in rows:
        if not filters.admits(scope_kind, scope_key, status, kind, trust, author):
            continue
        if reviewer_only and filters.hide_reviewer_only:
            continue
        if not scope_ok(scope_kind, scope_key):
            continue
        values = {"status": status, "kind": kind, "scope_kind": scope_kind, "trust": trust, "author": author,
                  "realm": realm}
        for name, value in values.items():
            facets.counts[name][value] += records


class _Deadline:
    """One request's CPU-time budget for the counts no counter holds (as realm queries are limited,
    docs/serving.md §3: the thread's CPU time, so waiting for a worker does not count)."""

    def __init__(self, seconds: float) -> None:
        self.ends = time.thread_time() + seconds

    def passed(self) -> bool:
        return time.thread_time() > self.ends

    @contextmanager
    def watching(self, conn: sqlite3.Connection) -> Iterator[None]:
        """SQLite interrupts the statement once the budget is spent (it raises "interrupted")."""
        conn.set_progress_handler(lambda: 1 if self.passed() else 0, PROGRESS_STEPS)
        try:
            yield
        finally:
            conn.set_progress_handler(None, 0)
