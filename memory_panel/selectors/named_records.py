"""Realm-wide rows that name a record, and what they may show of it (docs/access.md §2.8).

An injection, a dream run's touched records and rationales, an audit verdict: each names a record
by id, so each is shown only to a caller who may read that record. And a list of such rows is
filtered before its limit, so a caller denied some rows still gets a full page of the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, TypeVar

from django.db import DatabaseError

from memory_panel.errors import UnknownRealm
from memory_panel.store.realms import realm_alias
from memory_panel.store.rows import records_by_id
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


def record_titles(*, access: Access, refs: Iterable[RecordRef]) -> dict[RecordRef, str]:
    """The title of each record named in ``refs`` that this caller may read (docs/access.md §2.8).

    A page that names a record shows its title beside the id; a record the caller may not read,
    or one its realm no longer holds, is missing from the answer, so the page shows the id alone.
    A title is a courtesy: a realm that cannot be read just now (gone, damaged, busy) leaves its
    records as ids rather than failing the page or a live timeline frame.
    """
    by_realm: dict[str, set[str]] = {}
    for realm, memory_id in refs:
        by_realm.setdefault(realm, set()).add(memory_id)
    titles: dict[RecordRef, str] = {}
    for realm, ids in by_realm.items():
        try:
            titles.update(_realm_titles(access, realm, sorted(ids)))
        except (UnknownRealm, DatabaseError):
            continue
    return titles


def _realm_titles(access: Access, realm: str, ids: list[str]) -> dict[RecordRef, str]:
    alias = realm_alias(realm)
    titles: dict[RecordRef, str] = {}
    for start in range(0, len(ids), LOOKUP_CHUNK):
        for record in records_by_id(alias, realm, ids[start : start + LOOKUP_CHUNK]):
            if record.title and record_visible(access, record):
                titles[(realm, record.id)] = record.title
    return titles


def first_visible(rows: Iterator[T], *, keep: Callable[[list[T]], list[T]], limit: int) -> list[T]:
    """The first ``limit`` rows of ``rows`` (read lazily, in order) that ``keep`` lets through."""
    shown: list[T] = []
    chunk = max(limit, FILL_CHUNK)
    while len(shown) < limit and (batch := list(islice(rows, chunk))):
        shown += keep(batch)
    return shown[:limit]
