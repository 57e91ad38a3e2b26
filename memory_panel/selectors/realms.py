"""Realm-level summaries for the console shell: which realms exist, how big, which store format."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import DatabaseError, connections

from memory_panel.errors import StoreFailed, UnknownRealm
from memory_panel.store.console_index.family import build_progress
from memory_panel.store.console_index.progress import BuildProgress
from memory_panel.store.realms import realm_alias, realm_names_containing, store_format
from memory_panel.visibility import can_read_realm_history

if TYPE_CHECKING:
    from access.caller import Access

# Counting stops here (a capped count, as Datasette shows): the shell costs one bounded query per
# realm however large a realm grows.
RECORD_COUNT_CAP = 10_000
# The realm list shows this many realms a page: it opens each realm it shows, and 500 realms'
# rows would be half a megabyte (docs/daily-use.md §3).
REALMS_PAGE = 100


@dataclass(frozen=True)
class RealmSummary:
    name: str
    record_count: int | None  # None when the file could not be read, or the caller may not count
    count_capped: bool  # True when the realm holds more than RECORD_COUNT_CAP records
    format_label: str | None
    error: str | None = None
    indexing: BuildProgress | None = None  # an index of the realm being built, how far along

    @property
    def count_label(self) -> str:
        if self.record_count is None:
            return "–"
        return f"{self.record_count:,}+" if self.count_capped else f"{self.record_count:,}"


@dataclass(frozen=True)
class RealmPage:
    realms: list[RealmSummary]
    matching: int  # realms whose names hold the text asked for, on every page
    next_after: str | None  # the name the next page starts after; None on the last page


def realm_summaries(*, access: Access, contains: str = "", after: str | None = None) -> RealmPage:
    """A page of the realms with a store file whose names hold ``contains``, in name order after
    ``after``; an unreadable file is reported, not raised.

    Counts cover every scope and status, so only a caller with realm-wide read may see them.
    """
    counted = can_read_realm_history(access)
    names, matching = realm_names_containing(contains, REALMS_PAGE + 1, after=after)
    summaries = (_realm_summary(name, counted=counted) for name in names[:REALMS_PAGE])
    return RealmPage(
        [summary for summary in summaries if summary is not None],
        matching,
        names[REALMS_PAGE - 1] if len(names) > REALMS_PAGE else None,
    )


def _realm_summary(name: str, *, counted: bool) -> RealmSummary | None:
    try:
        alias = realm_alias(name)
        count = None
        if counted:
            with connections[alias].cursor() as cursor:
                cursor.execute(
                    "SELECT COUNT(*) FROM (SELECT 1 FROM records LIMIT %s)", [RECORD_COUNT_CAP + 1]
                )
                (count,) = cursor.fetchone()
        label = store_format(name).label
    except UnknownRealm:
        return None  # the file went away between listing the directory and opening it
    except DatabaseError as exc:
        return RealmSummary(name, None, False, None, error=f"unreadable: {exc}")
    except StoreFailed as exc:
        return RealmSummary(name, None, False, None, error=f"unreadable: {exc.reason}")
    indexing = build_progress(name)
    if count is None:
        return RealmSummary(name, None, False, label, indexing=indexing)
    return RealmSummary(name, min(count, RECORD_COUNT_CAP), count > RECORD_COUNT_CAP, label, indexing=indexing)
