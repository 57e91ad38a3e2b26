"""Realm-wide rows that name a record, and what they may show of it (docs/access.md §2.8).

An injection, a dream run's touched records and rationales, an audit verdict: each names a record
by id, so each is shown only to a caller who may read that record. And a list of such rows is
filtered before its limit, so a caller denied some rows still gets a full page of the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, TypeVar

from django.db import DatabaseError

from memory_panel.errors import UnknownRealm
from memory_panel.store.realms import realm_alias
from memory_panel.store.rows import named_rows, records_by_id
from memory_panel.visibility import record_visible

if TYPE_CHECKING:
    from access.caller import Access

T = TypeVar("T")

# Ids looked up per statement: well under SQLite's bound-parameter limit.
LOOKUP_CHUNK = 500
# Rows read per step while filling a list whose rows a caller may not all see.
FILL_CHUNK = 200


def unreadable_record_ids(*, access: Access, realm: str, ids: Iterable[str]) -> set[str]:
    """The ids among ``ids`` whose record this caller may not read.

    An id the realm no longer holds is not among them: there is no record left to protect, and
    the row naming it follows its own rule (an injection's identity, for instance).
    """
    if not access.enforced:
        return set()
    wanted = sorted(set(ids))
    alias = realm_alias(realm)
    hidden: set[str] = set()
    for start in range(0, len(wanted), LOOKUP_CHUNK):
        records = records_by_id(alias, realm, wanted[start : start + LOOKUP_CHUNK])
        hidden.update(record.id for record in records if not record_visible(access, record))
    return hidden


RecordRef = tuple[str, str]  # (realm, memory id)


@dataclass(frozen=True)
class NamedRecords:
    """What a caller may learn of the records a page or an event names (docs/access.md §2.8)."""

    titles: dict[RecordRef, str]  # the titled records the caller may read
    hidden: frozenset[RecordRef]  # the records the caller may not read: not even their ids are shown


def record_titles(*, access: Access, refs: Iterable[RecordRef]) -> dict[RecordRef, str]:
    """The title of each record named in ``refs`` that this caller may read (docs/access.md §2.8).

    A page that names a record links it by its title; a record the caller may not read, or one its
    realm no longer holds, is missing from the answer, so the page shows the id alone.
    A title is a courtesy: a realm that cannot be read just now (gone, damaged, busy) leaves its
    records as ids rather than failing the page or a live timeline frame.
    """
    return named_records(access=access, refs=refs).titles


def named_records(*, access: Access, refs: Iterable[RecordRef]) -> NamedRecords:
    """The titles this caller may read, and the records whose very ids it may not see.

    A record the realm no longer holds hides nothing (there is nothing left to protect); a realm
    that cannot be read just now hides its records from every caller who could be denied one, as
    nothing tells which of them are reviewer-only.
    """
    by_realm: dict[str, set[str]] = {}
    for realm, memory_id in refs:
        by_realm.setdefault(realm, set()).add(memory_id)
    titles: dict[RecordRef, str] = {}
    hidden: set[RecordRef] = set()
    for realm, ids in by_realm.items():
        try:
            _realm_names(access, realm, sorted(ids), titles, hidden)
        except UnknownRealm:
            continue
        except DatabaseError:
            if not reads_every_record(access):
                hidden.update((realm, memory_id) for memory_id in ids)
    return NamedRecords(titles, frozenset(hidden))


def reads_every_record(access: Access) -> bool:
    """No record is hidden from this caller, so naming one needs no look-up."""
    return not access.enforced or access.is_admin


def _realm_names(access: Access, realm: str, ids: list[str], titles: dict[RecordRef, str],
                 hidden: set[RecordRef]) -> None:
    for start in range(0, len(ids), LOOKUP_CHUNK):
        for record in named_rows(realm, ids[start : start + LOOKUP_CHUNK]):
            if not record_visible(access, record):
                hidden.add((realm, record.id))
            elif record.title:
                titles[(realm, record.id)] = record.title


def first_visible(rows: Iterator[T], *, keep: Callable[[list[T]], list[T]], limit: int) -> list[T]:
    """The first ``limit`` rows of ``rows`` (read lazily, in order) that ``keep`` lets through."""
    shown: list[T] = []
    chunk = max(limit, FILL_CHUNK)
    while len(shown) < limit and (batch := list(islice(rows, chunk))):
        shown += keep(batch)
    return shown[:limit]
