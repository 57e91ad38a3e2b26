"""Reading record rows out of a realm: the columns MobKit's list and full rows carry.

Every selector that returns records reads them through here, so a list row means the same
thing on every page and method (docs/wire-contract.md §1.2).
"""

from __future__ import annotations

from django.db import connections
from django.db.models import BinaryField
from django.db.models.functions import Cast, Length

from memory_panel.models import Record
from memory_panel.store.realms import realm_alias, realm_names, store_format
from memory_panel.store.records import LIST_COLUMNS, RECORD_COLUMNS, MemoryRecord, decode_record


def panel_realms(realm: str | None) -> list[str]:
    """The realms a read spans: the one asked for, else every realm with a store file."""
    return [realm] if realm is not None else realm_names()


def records_by_id(alias: str, realm: str, ids: list[str]) -> list[MemoryRecord]:
    """List rows for ``ids``, in that order (ids the realm no longer holds are skipped).

    Every page served from the index comes through here, so it is one plain statement on the
    alias's connection (same columns as ``list_rows``): building the queryset cost more than
    running the primary-key lookups it makes.
    """
    if not ids:
        return []
    columns = (*record_columns(realm, LIST_COLUMNS), "body_bytes")
    sql = (
        f"SELECT {', '.join(columns[:-1])}, LENGTH(CAST(body AS BLOB)) FROM records"
        f" WHERE memory_id IN ({', '.join(['%s'] * len(ids))})"
    )
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, ids)
        rows = {row[0]: dict(zip(columns, row)) for row in cursor.fetchall()}
    return [decode_record(realm, rows[memory_id]) for memory_id in ids if memory_id in rows]


def record_columns(realm: str, base: tuple[str, ...]) -> tuple[str, ...]:
    # Older files have no ever_quarantined column; decode_record reads its absence as 0.
    return base + ("ever_quarantined",) if store_format(realm).has_ever_quarantined else base


def list_rows(alias: str, realm: str):
    """Body-free rows with ``body_bytes`` measured in UTF-8 bytes, as MobKit's list rows are."""
    return (
        Record.objects.using(alias)
        .annotate(body_bytes=Length(Cast("body", BinaryField())))
        .values(*record_columns(realm, LIST_COLUMNS), "body_bytes")
    )


def full_rows(alias: str, realm: str):
    return Record.objects.using(alias).values(*record_columns(realm, RECORD_COLUMNS))


def realm_cursor(realm: str):
    return connections[realm_alias(realm)].cursor()
