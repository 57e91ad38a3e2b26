"""A realm as it stood at one moment, and what changed between two (docs/history.md §3–§5).

Statuses come from the realm's replayed audit rows, kept in the console's history file
(``memory_panel/store/history_file.py``); a record's content is its row, which never changes once
written (a new version is a new row). Every record passes the pages' own visibility check with its
status at that moment, so a record then in quarantine is a reviewer's alone, as it was then. Counts
are read grouped by scope, kind, status and flag; pages are keyset reads of the history file, and
only the rows a page shows are decoded.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import islice
from typing import TYPE_CHECKING

from memory_panel.cursor import MomentCursor
from memory_panel.errors import AccessDenied, InvalidParams, NotFound, UnknownRealm
from memory_panel.selectors.biography import supersede_chain
from memory_panel.selectors.diff import VersionDiff, version_diff
from memory_panel.selectors.holdings import ScopeHoldings
from memory_panel.store.history import CHANGE_KINDS, SUPERSEDED, Change
from memory_panel.store.history_file import Group, Span, realm_history
from memory_panel.store.realms import realm_alias
from memory_panel.store.records import SCOPE_ORDER, MemoryRecord, decode_record
from memory_panel.store.rows import list_rows, panel_realms, realm_read, records_by_id
from memory_panel.visibility import record_denial_action, record_visible, row_checker
from memory_panel.wire.params import FLOOR_BYTES, FLOOR_RECORDS

if TYPE_CHECKING:
    from access.caller import Access

Checker = Callable[[str, str, str, bool], bool]


@dataclass(frozen=True)
class RecordsAsOf:
    """One keyset page of the records as they stood, newest change first, and how many there were."""

    records: list[MemoryRecord]
    next_cursor: MomentCursor | None
    total: int
    by_status: dict[str, int]


def _as_it_stood(record: MemoryRecord, last: Change) -> MemoryRecord:
    """The record as its last change ``last`` left it. ``updated_at_ms`` becomes that change's
    moment: the order of the pages at a moment, and their keyset."""
    return replace(record, status=last.status, status_detail=last.status_detail, updated_at_ms=last.at_ms)


def _checker(access: Access) -> Checker:
    """Who sees a record as it stood: its scope, status then and quarantine flag (docs/access.md §2.4)."""
    if not access.enforced:
        return lambda kind, key, status, ever: True
    return row_checker(access)


def _seen(visible: Checker, span: Span) -> bool:
    return visible(span.scope_kind, span.scope_key, span.status, span.ever_quarantined)


def _first_seen(spans: Iterator[Span], visible: Checker, count: int) -> list[Span]:
    """The first ``count`` spans the caller may see, reading no further."""
    return list(islice((span for span in spans if _seen(visible, span)), count))


Position = tuple[int, str, int, int]


def _position(realm: str, span: Span) -> Position:
    """Where a span sorts on the pages across realms: its moment, the realm, then its key in the
    realm's history file (docs/history.md §4)."""
    return (span.from_ms, realm, span.record, span.n)


def _decoded(rows: list[tuple[str, str, Change]]) -> list[MemoryRecord]:
    """The (realm, memory_id, state then) rows' records as they stood, in order (one statement per realm)."""
    by_realm: dict[str, list[str]] = {}
    for realm, memory_id, _ in rows:
        by_realm.setdefault(realm, []).append(memory_id)
    records = {(realm, record.id): record
               for realm, ids in by_realm.items() for record in records_by_id(realm_alias(realm), realm, ids)}
    return [_as_it_stood(records[(realm, memory_id)], state)
            for realm, memory_id, state in rows if (realm, memory_id) in records]


def records_as_of(
    *, access: Access, realm: str | None, at_ms: int, status: str | None = None, scope_kind: str | None = None,
    scope_key: str | None = None, kind: str | None = None, limit: int, cursor: MomentCursor | None = None,
) -> RecordsAsOf:
    """The Records page at ``at_ms``: keyset pages by (last change then, realm, the record's key),
    newest first, read from each realm's kept history (docs/history.md §4)."""
    visible = _checker(access)
    picked: list[tuple[Position, Span]] = []
    by_status: Counter = Counter()
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None), realm_history(name) as history:
            for group in history.groups_at(at_ms):
                if ((scope_kind is None or group.scope_kind == scope_kind)
                        and (scope_key is None or group.scope_key == scope_key)
                        and (kind is None or group.kind == kind)
                        and visible(group.scope_kind, group.scope_key, group.status, group.ever_quarantined)):
                    by_status[group.status] += group.records
            spans = history.standing_at(at_ms, before=cursor.key_in(name) if cursor else None, status=status,
                                        kind=kind, scope_kind=scope_kind, scope_key=scope_key)
            # One more row than shown says whether there is a next page.
            picked += [(_position(name, span), span) for span in _first_seen(spans, visible, limit + 1)]
    picked = heapq.nlargest(limit + 1, picked, key=lambda row: row[0])
    shown = picked[:limit]
    page = _decoded([(position[1], span.memory_id, span.as_change()) for position, span in shown])
    with_more = len(picked) > limit and shown
    total = by_status[status] if status is not None else sum(by_status.values())
    return RecordsAsOf(page, MomentCursor(*shown[-1][0]) if with_more else None, total, dict(by_status))


def _standing(spans: list[Span], at_ms: int) -> Span | None:
    """The span of ``spans`` that stood at ``at_ms``, if the record existed then."""
    return next((span for span in spans if span.from_ms <= at_ms and (span.to_ms is None or span.to_ms > at_ms)),
                None)


@dataclass(frozen=True)
class RecordAsOf:
    """One record at a moment: as it stood (None before it was written), and its lineage then.

    ``current_id`` is the version of the lineage that was current then: the active one, else the
    newest that existed.
    """

    realm: str
    record: MemoryRecord | None
    written_at_ms: int | None
    chain: list[MemoryRecord]
    current_id: str | None


def record_as_of(*, access: Access, realm: str | None, memory_id: str, at_ms: int) -> RecordAsOf:
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            row = list_rows(realm_alias(name), name).filter(memory_id=memory_id).first()
            if row is None:
                continue
            now = decode_record(name, row)
            links = supersede_chain(access=access, realm=name, memory_id=memory_id)
            with realm_history(name) as history:
                spans = history.spans_of(sorted({memory_id, *(link.id for link in links)}))
            state = _standing(spans.get(memory_id, []), at_ms)
            record = _as_it_stood(now, state.as_change()) if state is not None else None
            # Visible as it stood, and as it stands: a record in quarantine now or then is a reviewer's.
            for shown in (now, record):
                if shown is not None and not record_visible(access, shown):
                    raise AccessDenied(record_denial_action(access, shown), memory_id)
            chain = [_as_it_stood(link, then.as_change()) for link in links
                     if (then := _standing(spans.get(link.id, []), at_ms)) is not None]
            chain = [link for link in chain if record_visible(access, link)]
            active = [link.id for link in chain if link.status == "active"]
            current = active[-1] if active else (chain[-1].id if chain else None)
            own = spans.get(memory_id)
            return RecordAsOf(name, record, own[0].from_ms if own else None, chain, current)
    raise NotFound(f"unknown memory record '{memory_id}'")


def holdings_as_of(*, access: Access, realm: str | None, at_ms: int) -> list[ScopeHoldings]:
    """Holdings at ``at_ms``: each visible scope's records by status then (docs/history.md §4)."""
    visible = _checker(access)
    out: list[ScopeHoldings] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None), realm_history(name) as history:
            out += scope_holdings_of(name, history.groups_at(at_ms), visible)
    out.sort(key=lambda s: (s.realm, SCOPE_ORDER.get(s.scope_kind, len(SCOPE_ORDER)), s.scope_key))
    return out


def scope_holdings_of(realm: str, groups: list[Group], visible: Checker | None = None) -> list[ScopeHoldings]:
    """Each scope's holdings from a moment's groups (``History.groups_at``), counting the groups
    ``visible`` lets through (None: all of them, for the console's own alert preview)."""
    counts: dict[tuple[str, str], Counter] = {}
    for group in groups:
        if visible is not None and not visible(group.scope_kind, group.scope_key, group.status, group.ever_quarantined):
            continue
        tally = counts.setdefault((group.scope_kind, group.scope_key), Counter())
        tally[group.status] += group.records
        if group.status == "active":
            tally["body_bytes"] += group.body_bytes
    return [
        ScopeHoldings(realm=realm, scope_kind=kind, scope_key=key, active=t["active"], quarantined=t["quarantined"],
                      superseded=t["superseded"], tombstoned=t["tombstoned"], body_bytes=t["body_bytes"],
                      floor_pressure=t["active"] >= FLOOR_RECORDS or t["body_bytes"] >= FLOOR_BYTES)
        for (kind, key), t in counts.items()
    ]


@dataclass(frozen=True)
class KnowledgeAsOf:
    """What one identity knew at a moment: its active records then, by scope and kind."""

    identity: str
    composition: list[tuple[str, str, str, int]]  # (realm, scope label, kind, active records)
    records: list[MemoryRecord]


KNOWLEDGE_RECORDS_SHOWN = 50


def knowledge_as_of(*, access: Access, realm: str | None, identity: str, at_ms: int) -> KnowledgeAsOf:
    """The identity's own scope and the realm-wide scope, as they stood (docs/history.md §4)."""
    visible = _checker(access)
    tally: Counter = Counter()
    newest: list[tuple[Position, Span]] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None), realm_history(name) as history:
            for group in history.groups_at(at_ms):
                known = group.scope_kind == "realm" or (group.scope_kind == "identity" and group.scope_key == identity)
                if (known and group.status == "active"
                        and visible(group.scope_kind, group.scope_key, group.status, group.ever_quarantined)):
                    tally[(name, "realm" if group.scope_kind == "realm" else group.scope_key, group.kind)] += group.records
            for scope_kind, scope_key in (("realm", None), ("identity", identity)):
                spans = history.standing_at(at_ms, status="active", scope_kind=scope_kind, scope_key=scope_key)
                newest += [(_position(name, span), span)
                           for span in _first_seen(spans, visible, KNOWLEDGE_RECORDS_SHOWN)]
    newest = heapq.nlargest(KNOWLEDGE_RECORDS_SHOWN, newest, key=lambda row: row[0])
    shown: list[MemoryRecord] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            shown += _decoded([(name, span.memory_id, span.as_change()) for position, span in newest
                               if position[1] == name])
    shown.sort(key=lambda record: (record.updated_at_ms, record.id), reverse=True)
    return KnowledgeAsOf(identity, sorted((*key, n) for key, n in tally.items()), shown)


def identity_records_as_of(*, realm: str, identity: str, at_ms: int) -> list[MemoryRecord]:
    """The identity's records active at ``at_ms``, as they stood, oldest first: what contextual
    recall chose from then (docs/history.md §4). The caller's grant on the identity is the recall
    preview's own check."""
    try:
        realm_alias(realm)
    except UnknownRealm as error:
        raise InvalidParams(str(error)) from error
    records: list[MemoryRecord] = []
    with realm_read(realm, alone=True), realm_history(realm) as history:
        spans = list(history.standing_at(at_ms, status="active", scope_kind="identity", scope_key=identity))
        records = _decoded([(realm, span.memory_id, span.as_change()) for span in spans])
    return sorted(records, key=lambda record: (record.created_at_ms, record.updated_at_ms, record.id))


@dataclass(frozen=True)
class ChangeRow:
    """One change between two moments, with the record it concerns as it stood after it."""

    realm: str
    change: Change
    record: MemoryRecord


def _change_rows(changed: list[tuple[str, Span]]) -> list[ChangeRow]:
    """The changes with their records as they stood right after each (a record gone from the file is left out)."""
    changes = [(realm, span.as_change()) for realm, span in changed]
    records = _decoded([(realm, change.memory_id, change) for realm, change in changes])
    by_key = {(record.realm, record.id, record.updated_at_ms, record.status): record for record in records}
    out = []
    for realm, change in changes:
        record = by_key.get((realm, change.memory_id, change.at_ms, change.status))
        if record is not None:
            out.append(ChangeRow(realm, change, record))
    return out


CHANGES_DECODED = 500  # rows decoded at a time by the exports' walk


def changes_between(*, access: Access, realm: str | None, from_ms: int, to_ms: int) -> Iterator[ChangeRow]:
    """Every change after ``from_ms`` up to ``to_ms`` the caller may see, oldest first (docs/history.md §5),
    decoded a slice at a time."""
    visible = _checker(access)
    changed: list[tuple[Position, Span]] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None), realm_history(name) as history:
            changed += [(_position(name, span), span)
                        for span in history.changes_between(from_ms, to_ms) if _seen(visible, span)]
    changed.sort(key=lambda row: row[0])
    for start in range(0, len(changed), CHANGES_DECODED):
        part = changed[start : start + CHANGES_DECODED]
        yield from _change_rows([(position[1], span) for position, span in part])


@dataclass(frozen=True)
class ChangesPage:
    """One keyset page of the changes between two moments, the counts of them all by kind, and
    each superseded record's word diff to its successor (None where the caller may not read both)."""

    changes: list[ChangeRow]
    counts: dict[str, int]
    total: int
    next_cursor: MomentCursor | None
    diffs: dict[tuple[str, str], VersionDiff | None]


def changes_page(*, access: Access, realm: str | None, from_ms: int, to_ms: int, limit: int,
                 cursor: MomentCursor | None = None) -> ChangesPage:
    """The changes after ``from_ms`` up to ``to_ms`` in keyset pages of (moment, realm, the change's
    key), oldest first, read from each realm's kept history (docs/history.md §5)."""
    visible = _checker(access)
    counts: Counter = Counter()
    picked: list[tuple[Position, Span]] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None), realm_history(name) as history:
            for group in history.change_groups(from_ms, to_ms):
                if visible(group.scope_kind, group.scope_key, group.status, group.ever_quarantined):
                    counts[group.change] += group.records
            spans = history.changes_between(from_ms, to_ms, after=cursor.key_in(name) if cursor else None)
            picked += [(_position(name, span), span) for span in _first_seen(spans, visible, limit + 1)]
    picked = heapq.nsmallest(limit + 1, picked, key=lambda row: row[0])
    shown = picked[:limit]
    page = _change_rows([(position[1], span) for position, span in shown])
    with_more = len(picked) > limit and shown
    diffs = {(row.realm, row.record.id): change_diff(access, row) for row in page if row.change.kind == SUPERSEDED}
    return ChangesPage(page, {kind: counts[kind] for kind in CHANGE_KINDS}, sum(counts.values()),
                       MomentCursor(*shown[-1][0]) if with_more else None, diffs)


def change_diff(access: Access, row: ChangeRow) -> VersionDiff | None:
    """A superseded record's word diff to its successor; None unless the caller may read both."""
    try:
        return version_diff(access=access, realm=row.realm, memory_id=row.change.other_id or "")
    except (AccessDenied, NotFound, InvalidParams):
        return None
