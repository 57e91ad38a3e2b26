"""Reading record rows out of a realm: the columns MobKit's list and full rows carry.

Every selector that returns records reads them through here, so a list row means the same
thing on every page and method (docs/wire-contract.md §1.2).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Hashable, TypeVar

from django.db import DatabaseError, connections
from django.db.models import BinaryField
from django.db.models.functions import Cast, Length

from memory_panel.errors import StoreFailed, UnknownRealm
from memory_panel.models import Record
from memory_panel.store.realm_memo import realm_memo, realms_memo
from memory_panel.store.realms import realm_alias, realm_names, store_failed, store_format
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.records import LIST_COLUMNS, RECORD_COLUMNS, MemoryRecord, author_kind_sql, decode_record

logger = logging.getLogger("memory_panel.store")

T = TypeVar("T")


def panel_realms(realm: str | None) -> list[str]:
    """The realms a read spans: the one asked for, else every realm with a store file."""
    return [realm] if realm is not None else realm_names()


@dataclass(frozen=True)
class SkippedRealm:
    """A realm an all-realm read left out because its file could not be read, and why."""

    name: str
    reason: str


# The realms skipped while one page is built. A context variable, not a return value, so every
# selector keeps MobKit's result shape; the HTML page collects them (``noting_skipped_realms``),
# the RPC only logs them.
_skipped: ContextVar[list[SkippedRealm] | None] = ContextVar("skipped_realms", default=None)


@contextmanager
def realm_read(name: str, *, alone: bool) -> Iterator[None]:
    """One realm's part of a panel read: the one mechanism for realms that cannot be read.

    Asked for alone, a realm whose file cannot be read (damaged, truncated, garbage, busy) is a
    ``StoreFailed`` naming it. As one of every realm it is skipped (the block is abandoned),
    logged and noted for the page, and the other realms are served. A file gone since discovery
    has nothing to show either way.
    """
    try:
        yield
    except UnknownRealm:
        return
    except (DatabaseError, sqlite3.DatabaseError, StoreFailed) as error:
        if alone:
            raise store_failed(error, realm=name) from error
        skip_unreadable_realm(name, error)


def skip_unreadable_realm(name: str, error: Exception) -> None:
    """Leave realm ``name`` out of an all-realm read: logged, and noted for the page."""
    failure = store_failed(error, realm=name)
    if failure.realm is None:  # the time limit is this request's failure: say so
        raise failure from error
    logger.warning("skipping realm %r: %s", name, failure.reason)
    noted = _skipped.get()
    if noted is not None and all(skipped.name != name for skipped in noted):
        noted.append(SkippedRealm(name, failure.reason))


def realm_rows(
    realm: str | None, read: Callable[[str], list[T]], *, names: list[str] | None = None
) -> tuple[list[T], list[str]]:
    """``read(name)`` of each realm a panel read spans (or of ``names``), concatenated, and the
    realms it covers."""
    rows: list[T] = []
    realms: list[str] = []
    for name in panel_realms(realm) if names is None else names:
        with realm_read(name, alone=realm is not None):
            rows += read(name)
            realms.append(name)
    return rows, realms


def merged_realm_rows(
    realm: str | None,
    question: Hashable,
    read: Callable[[str], list[T] | None],
    *,
    order: Callable[[T], object] | None = None,
    reverse: bool = False,
) -> tuple[list[T] | None, list[str]]:
    """Every realm's ``read(name)`` in one list (sorted by ``order``, else realm by realm), kept
    while no realm's file moves (``realms_memo``), and the realms it covers.

    ``read`` must not depend on the caller (the selector filters the merged list afterwards) and
    answers None for a realm with too many rows to keep; then so does this, and the selector reads
    realm by realm instead.
    """
    names = panel_realms(realm)

    def merged() -> tuple[tuple[list[T] | None, list[str]], bool]:
        parts, realms = realm_rows(realm, lambda name: [read(name)], names=names)
        if any(part is None for part in parts):
            return (None, realms), False
        rows = [row for part in parts for row in part]
        if order is not None:
            rows.sort(key=order, reverse=reverse)
        # A realm that could not be read is tried again by the next request, so this is not kept.
        return (rows, realms), len(realms) == len(names)

    return realms_memo(names, question, merged)


@contextmanager
def noting_skipped_realms() -> Iterator[list[SkippedRealm]]:
    """Collect the realms ``realm_read`` skips inside the block (one page's worth)."""
    token = _skipped.set([])
    try:
        yield _skipped.get()
    finally:
        _skipped.reset(token)


def skipped_realms() -> list[SkippedRealm]:
    """The realms skipped so far while building this page (empty outside ``noting_skipped_realms``)."""
    return list(_skipped.get() or ())


def records_by_id(alias: str, realm: str, ids: list[str], *, with_body: bool = False) -> list[MemoryRecord]:
    """List rows for ``ids``, in that order (ids the realm no longer holds are skipped).

    Every page served from the index comes through here, so it is one plain statement on the
    alias's connection (same columns as ``list_rows``): building the queryset cost more than
    running the primary-key lookups it makes. ``with_body`` also reads each body, decoded and
    flagged like every other text column (docs/realm-failures.md §2), for search snippets.
    """
    if not ids:
        return []
    columns = (*record_columns(realm, LIST_COLUMNS), *(("body",) if with_body else ()), "body_bytes")
    sql = (
        f"SELECT {', '.join(columns[:-1])}, LENGTH(CAST(body AS BLOB)) FROM records"
        f" WHERE memory_id IN ({', '.join(['%s'] * len(ids))})"
    )
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, ids)
        rows = {row[0]: dict(zip(columns, row)) for row in cursor.fetchall()}
    return [decode_record(realm, rows[memory_id]) for memory_id in ids if memory_id in rows]


# The most body text one kept answer of ``named_rows`` holds; a few huge bodies are read afresh instead.
KEPT_BODY_BYTES = 256 * 1024


def named_rows(realm: str, ids: Iterable[str], *, with_body: bool = False) -> list[MemoryRecord]:
    """``records_by_id`` for the few records a page names in a realm, kept while the realm stands still.

    Titles, quarantine previews and injected records name a handful of records in each of many
    realms; at 500 realms a connection and a statement for each was most of such a page's time
    (docs/realm-index.md §10). The rows come back in id order.
    """
    wanted = sorted(set(ids))
    read = partial(records_by_id, realm_alias(realm), realm, wanted, with_body=with_body)

    def small() -> list[MemoryRecord] | None:
        rows = read()
        return rows if sum(len(row.body or "") for row in rows) <= KEPT_BODY_BYTES else None

    kept = realm_memo(realm, ("named_rows", tuple(wanted), with_body), small)
    return kept if kept is not None else read()


def record_columns(realm: str, base: tuple[str, ...]) -> tuple[str, ...]:
    # Older files have no ever_quarantined column; decode_record reads its absence as 0. The format
    # is kept while the file stands still: a page reading rows of many realms asks it of each.
    fmt = realm_memo(realm, "store_format", partial(store_format, realm))
    return base + ("ever_quarantined",) if fmt.has_ever_quarantined else base


def list_rows(alias: str, realm: str):
    """Body-free rows with ``body_bytes`` measured in UTF-8 bytes, as MobKit's list rows are."""
    return (
        Record.objects.using(alias)
        .annotate(body_bytes=Length(Cast("body", BinaryField())))
        .values(*record_columns(realm, LIST_COLUMNS), "body_bytes")
    )


def filtered_list_rows(alias: str, realm: str, filters: RecordFilter):
    """``list_rows`` that ``filters`` keeps, read straight from the realm file as the realm index would keep them.

    ``filters.scopes`` comes from an index's own scope list and is never set for a direct read.
    """
    queryset = list_rows(alias, realm).filter(**filters.realm_columns())
    queryset = queryset.exclude(scope_kind__in=filters.hidden_scope_kinds)
    if filters.hide_reviewer_only:  # the status only, as the realm index: the row check does the rest
        queryset = queryset.exclude(status_kind="quarantined")
    if filters.author is not None:
        queryset = queryset.extra(where=[f"{author_kind_sql('provenance')} = %s"], params=[filters.author])
    return queryset


def full_rows(alias: str, realm: str):
    return Record.objects.using(alias).values(*record_columns(realm, RECORD_COLUMNS))


def realm_cursor(realm: str):
    return connections[realm_alias(realm)].cursor()


def records_in_place(alias: str, realm: str, keys: dict[str, int]) -> list[MemoryRecord]:
    """The rows at the index positions, leaving out any a write moved since the index caught up.

    The row is read after its position, so the runtime may have superseded or forgotten it in
    between: it now belongs higher up, where the next request's index lists it. Shown here it
    would break the page's order, and a cursor taken after it would restart the walk.
    """
    return [record for record in records_by_id(alias, realm, list(keys)) if record.updated_at_ms == keys[record.id]]
