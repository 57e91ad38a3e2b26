"""A realm as it stood at one moment, and what changed between two (docs/history.md §3–§5).

Statuses come from the realm's replayed audit rows (``memory_panel/store/history.py``); a record's
content is its row, which never changes once written (a new version is a new row). Every record
passes the pages' own visibility check with its status at that moment, so a record then in
quarantine is a reviewer's alone, as it was then. Rows are chosen, counted and ordered on their
facts (``RecordFacts``: scope, kind, flag) and only the rows a page shows are decoded.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from memory_panel.cursor import Cursor
from memory_panel.errors import AccessDenied, InvalidParams, NotFound
from memory_panel.selectors.biography import supersede_chain
from memory_panel.selectors.diff import VersionDiff, version_diff
from memory_panel.selectors.holdings import ScopeHoldings
from memory_panel.store.history import (
    CHANGE_KINDS,
    SUPERSEDED,
    Change,
    RecordFacts,
    realm_history,
)
from memory_panel.store.realms import realm_alias
from memory_panel.store.records import SCOPE_ORDER, MemoryRecord, decode_record
from memory_panel.store.rows import list_rows, panel_realms, realm_read, records_by_id
from memory_panel.visibility import record_denial_action, record_visible, row_checker
from memory_panel.wire.params import FLOOR_BYTES, FLOOR_RECORDS

if TYPE_CHECKING:
    from access.caller import Access


@dataclass(frozen=True)
class RecordsAsOf:
    """One keyset page of the records as they stood, newest change first, and how many there were."""

    records: list[MemoryRecord]
    next_cursor: Cursor | None
    total: int
    by_status: dict[str, int]


def _as_it_stood(record: MemoryRecord, last: Change) -> MemoryRecord:
    """The record as its last change ``last`` left it. ``updated_at_ms`` becomes that change's
    moment: the order of the pages at a moment, and their keyset."""
    return replace(record, status=last.status, status_detail=last.status_detail, updated_at_ms=last.at_ms)


class _Then(NamedTuple):
    """A record at a moment, not decoded. A tuple that sorts by its keyset position first
    (moment, memory_id, realm: unique), so a page is picked without a key function."""

    at_ms: int
    memory_id: str
    realm: str
    facts: RecordFacts
    state: Change

    @property
    def key(self) -> tuple[int, str]:
        return (self.at_ms, self.memory_id)


# Made from a ready tuple: a realm's every record passes here, and the class's own __new__ costs
# twice the time of the walk itself.
_then = partial(tuple.__new__, _Then)


def _realm_then(access: Access, realm: str, at_ms: int) -> list[_Then]:
    """The realm's records that existed at ``at_ms``, as they stood, those the caller may see then."""
    history = realm_history(realm)
    facts = history.facts
    states = history.state_at(at_ms)
    if not access.enforced:
        return [_then((last.at_ms, memory_id, realm, facts[memory_id], last))
                for memory_id, last in states.items() if memory_id in facts]
    visible = row_checker(access)
    return [_then((last.at_ms, memory_id, realm, row, last)) for memory_id, last in states.items()
            if (row := facts.get(memory_id)) is not None
            and visible(row.scope_kind, row.scope_key, last.status, row.ever_quarantined)]


def _decoded(rows: list[tuple[str, str, Change]]) -> list[MemoryRecord]:
    """The (realm, memory_id, state then) rows' records as they stood, in order (one statement per realm)."""
    by_realm: dict[str, list[str]] = {}
    for realm, memory_id, _ in rows:
        by_realm.setdefault(realm, []).append(memory_id)
    records = {(realm, record.id): record
               for realm, ids in by_realm.items() for record in records_by_id(realm_alias(realm), realm, ids)}
    return [_as_it_stood(records[(realm, memory_id)], state)
            for realm, memory_id, state in rows if (realm, memory_id) in records]


def _then_rows(rows: list[_Then]) -> list[tuple[str, str, Change]]:
    return [(row.realm, row.facts.memory_id, row.state) for row in rows]


def records_as_of(
    *, access: Access, realm: str | None, at_ms: int, status: str | None = None, scope_kind: str | None = None,
    scope_key: str | None = None, kind: str | None = None, limit: int, cursor: Cursor | None = None,
) -> RecordsAsOf:
    """The Records page at ``at_ms``: keyset pages by (last change then, memory_id), newest first."""
    kept: list[_Then] = []
    by_status: Counter = Counter()
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            for row in _realm_then(access, name, at_ms):
                facts = row.facts
                if ((scope_kind is None or facts.scope_kind == scope_kind)
                        and (scope_key is None or facts.scope_key == scope_key)
                        and (kind is None or facts.kind == kind)):
                    by_status[row.state.status] += 1
                    if status is None or row.state.status == status:
                        kept.append(row)
    total = len(kept)
    if cursor is not None:
        after = cursor.key()
        kept = [row for row in kept if (row.at_ms, row.memory_id) < after]
    # The page alone is ordered: one more row than shown says whether there is a next page.
    picked = heapq.nlargest(limit + 1, kept)
    shown = picked[:limit]
    page = _decoded(_then_rows(shown))
    with_more = len(picked) > limit and shown
    return RecordsAsOf(page, Cursor(*shown[-1].key) if with_more else None, total, dict(by_status))


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
            history = realm_history(name)
            states = history.state_at(at_ms)
            state = states.get(memory_id)
            record = _as_it_stood(now, state) if state is not None else None
            # Visible as it stood, and as it stands: a record in quarantine now or then is a reviewer's.
            for shown in (now, record):
                if shown is not None and not record_visible(access, shown):
                    raise AccessDenied(record_denial_action(access, shown), memory_id)
            chain = [_as_it_stood(link, states[link.id])
                     for link in supersede_chain(access=access, realm=name, memory_id=memory_id) if link.id in states]
            chain = [link for link in chain if record_visible(access, link)]
            active = [link.id for link in chain if link.status == "active"]
            current = active[-1] if active else (chain[-1].id if chain else None)
            written = next((c.at_ms for c in history.changes if c.memory_id == memory_id), None)
            return RecordAsOf(name, record, written, chain, current)
    raise NotFound(f"unknown memory record '{memory_id}'")


def holdings_as_of(*, access: Access, realm: str | None, at_ms: int) -> list[ScopeHoldings]:
    """Holdings at ``at_ms``: each visible scope's records by status then (docs/history.md §4)."""
    counts: dict[tuple[str, str, str], Counter] = {}
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            for row in _realm_then(access, name, at_ms):
                tally = counts.setdefault((name, row.facts.scope_kind, row.facts.scope_key), Counter())
                tally[row.state.status] += 1
                if row.state.status == "active":
                    tally["body_bytes"] += row.facts.body_bytes
    out = [
        ScopeHoldings(realm=name, scope_kind=kind, scope_key=key, active=t["active"], quarantined=t["quarantined"],
                      superseded=t["superseded"], tombstoned=t["tombstoned"], body_bytes=t["body_bytes"],
                      floor_pressure=t["active"] >= FLOOR_RECORDS or t["body_bytes"] >= FLOOR_BYTES)
        for (name, kind, key), t in counts.items()
    ]
    out.sort(key=lambda s: (s.realm, SCOPE_ORDER.get(s.scope_kind, len(SCOPE_ORDER)), s.scope_key))
    return out


@dataclass(frozen=True)
class KnowledgeAsOf:
    """What one identity knew at a moment: its active records then, by scope and kind."""

    identity: str
    composition: list[tuple[str, str, str, int]]  # (realm, scope label, kind, active records)
    records: list[MemoryRecord]


KNOWLEDGE_RECORDS_SHOWN = 50


def knowledge_as_of(*, access: Access, realm: str | None, identity: str, at_ms: int) -> KnowledgeAsOf:
    """The identity's own scope and the realm-wide scope, as they stood (docs/history.md §4)."""
    known: list[_Then] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            known += [row for row in _realm_then(access, name, at_ms) if row.state.status == "active"
                      and (row.facts.scope_kind == "realm"
                           or (row.facts.scope_kind == "identity" and row.facts.scope_key == identity))]
    tally = Counter((row.realm, "realm" if row.facts.scope_kind == "realm" else row.facts.scope_key, row.facts.kind)
                    for row in known)
    newest = heapq.nlargest(KNOWLEDGE_RECORDS_SHOWN, known)
    shown: list[MemoryRecord] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            shown += _decoded(_then_rows([row for row in newest if row.realm == name]))
    shown.sort(key=lambda record: (record.updated_at_ms, record.id), reverse=True)
    return KnowledgeAsOf(identity, sorted((*key, n) for key, n in tally.items()), shown)


@dataclass(frozen=True)
class ChangeRow:
    """One change between two moments, with the record it concerns as it stood after it."""

    realm: str
    change: Change
    record: MemoryRecord


@dataclass(frozen=True, slots=True)
class _Changed:
    """A change the caller may see, its record not decoded yet."""

    realm: str
    change: Change

    @property
    def key(self) -> tuple[int, str]:
        """The keyset position: the moment, then the record (one record changes once per batch)."""
        return (self.change.at_ms, self.change.memory_id)


def _visible_changes(access: Access, realm: str | None, from_ms: int, to_ms: int) -> list[_Changed]:
    """Every change after ``from_ms`` up to ``to_ms`` the caller may see, in keyset order.

    A change is seen by those who may see its record as it stood right after the change, so a
    record's quarantine, and its release, are a reviewer's.
    """
    out: list[_Changed] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            history = realm_history(name)
            visible = row_checker(access)
            for change in history.between(from_ms, to_ms):
                row = history.facts.get(change.memory_id)
                if row is not None and visible(row.scope_kind, row.scope_key, change.status, row.ever_quarantined):
                    out.append(_Changed(name, change))
    out.sort(key=lambda row: row.key)
    return out


def _change_rows(changed: list[_Changed]) -> list[ChangeRow]:
    """The changes with their records as they stood right after each (a record gone from the file is left out)."""
    records = _decoded([(row.realm, row.change.memory_id, row.change) for row in changed])
    by_key = {(record.realm, record.id, record.updated_at_ms, record.status): record for record in records}
    out = []
    for row in changed:
        record = by_key.get((row.realm, row.change.memory_id, row.change.at_ms, row.change.status))
        if record is not None:
            out.append(ChangeRow(row.realm, row.change, record))
    return out


CHANGES_DECODED = 500  # rows decoded at a time by the exports' walk


def changes_between(*, access: Access, realm: str | None, from_ms: int, to_ms: int) -> Iterator[ChangeRow]:
    """Every change after ``from_ms`` up to ``to_ms`` the caller may see, oldest first (docs/history.md §5),
    decoded a slice at a time."""
    changed = _visible_changes(access, realm, from_ms, to_ms)
    for start in range(0, len(changed), CHANGES_DECODED):
        yield from _change_rows(changed[start : start + CHANGES_DECODED])


@dataclass(frozen=True)
class ChangesPage:
    """One keyset page of the changes between two moments, the counts of them all by kind, and
    each superseded record's word diff to its successor (None where the caller may not read both)."""

    changes: list[ChangeRow]
    counts: dict[str, int]
    total: int
    next_cursor: Cursor | None
    diffs: dict[tuple[str, str], VersionDiff | None]


def changes_page(*, access: Access, realm: str | None, from_ms: int, to_ms: int, limit: int,
                 cursor: Cursor | None = None) -> ChangesPage:
    """``changes_between`` in keyset pages of (moment, memory_id), oldest first (docs/history.md §5)."""
    every = _visible_changes(access, realm, from_ms, to_ms)
    counts = Counter(row.change.kind for row in every)
    after = [row for row in every if cursor is None or row.key > cursor.key()]
    shown = after[:limit]
    page = _change_rows(shown)
    with_more = len(after) > limit and shown
    diffs = {(row.realm, row.record.id): change_diff(access, row) for row in page if row.change.kind == SUPERSEDED}
    return ChangesPage(page, {kind: counts[kind] for kind in CHANGE_KINDS}, len(every),
                       Cursor(*shown[-1].key) if with_more else None, diffs)


def change_diff(access: Access, row: ChangeRow) -> VersionDiff | None:
    """A superseded record's word diff to its successor; None unless the caller may read both."""
    try:
        return version_diff(access=access, realm=row.realm, memory_id=row.change.other_id or "")
    except (AccessDenied, NotFound, InvalidParams):
        return None
