"""A realm as it stood at one moment, and what changed between two (docs/history.md §3–§5).

Statuses come from the realm's replayed audit rows (``memory_panel/store/history.py``); a record's
content is its row, which never changes once written (a new version is a new row). Every record
passes the pages' own visibility check with its status at that moment, so a record then in
quarantine is a reviewer's alone, as it was then.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memory_panel.cursor import Cursor
from memory_panel.errors import AccessDenied, InvalidParams, NotFound
from memory_panel.selectors.biography import supersede_chain
from memory_panel.selectors.diff import VersionDiff, version_diff
from memory_panel.selectors.holdings import ScopeHoldings
from memory_panel.store.history import CHANGE_KINDS, SUPERSEDED, Change, RecordState, realm_history
from memory_panel.store.realms import realm_alias
from memory_panel.store.records import SCOPE_ORDER, MemoryRecord, decode_record
from memory_panel.store.rows import list_rows, panel_realms, realm_read
from memory_panel.visibility import record_denial_action, record_visible
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


def _as_it_stood(record: MemoryRecord, state: RecordState) -> MemoryRecord:
    # ``updated_at_ms`` becomes the moment of the record's last change then: the order, and the keyset.
    return replace(record, status=state.status, status_detail=state.status_detail, updated_at_ms=state.changed_at_ms)


def _realm_records_at(access: Access, realm: str, at_ms: int) -> list[MemoryRecord]:
    """The realm's records that existed at ``at_ms``, as they stood, those the caller may see then."""
    states = realm_history(realm).state_at(at_ms)
    out = []
    # Every row once, kept by id: a list of ids past SQLite's bound-variable limit cannot be a filter.
    for row in list_rows(realm_alias(realm), realm).iterator():
        state = states.get(row["memory_id"])
        if state is None:
            continue
        record = _as_it_stood(decode_record(realm, row), state)
        if record_visible(access, record):
            out.append(record)
    return out


def records_as_of(
    *, access: Access, realm: str | None, at_ms: int, status: str | None = None, scope_kind: str | None = None,
    scope_key: str | None = None, kind: str | None = None, limit: int, cursor: Cursor | None = None,
) -> RecordsAsOf:
    """The Records page at ``at_ms``: keyset pages by (last change then, memory_id), newest first."""
    kept: list[MemoryRecord] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            kept += [r for r in _realm_records_at(access, name, at_ms)
                     if (scope_kind is None or r.scope_kind == scope_kind)
                     and (scope_key is None or r.scope_key == scope_key)
                     and (kind is None or r.kind == kind)]
    by_status = Counter(record.status for record in kept)
    if status is not None:
        kept = [record for record in kept if record.status == status]
    kept.sort(key=lambda record: (record.updated_at_ms, record.id), reverse=True)
    total = len(kept)
    if cursor is not None:
        kept = [record for record in kept if (record.updated_at_ms, record.id) < cursor.key()]
    page = kept[:limit]
    more = len(kept) > limit and page
    return RecordsAsOf(page, Cursor.after(page[-1]) if more else None, total, dict(by_status))


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
            for record in _realm_records_at(access, name, at_ms):
                tally = counts.setdefault((name, record.scope_kind, record.scope_key), Counter())
                tally[record.status] += 1
                if record.status == "active":
                    tally["body_bytes"] += record.body_bytes
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
    known: list[MemoryRecord] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            known += [r for r in _realm_records_at(access, name, at_ms) if r.status == "active"
                      and (r.scope_kind == "realm" or (r.scope_kind == "identity" and r.scope_key == identity))]
    tally = Counter((r.realm, "realm" if r.scope_kind == "realm" else r.scope_key, r.kind) for r in known)
    known.sort(key=lambda record: (record.updated_at_ms, record.id), reverse=True)
    return KnowledgeAsOf(identity, sorted((*key, n) for key, n in tally.items()), known[:KNOWLEDGE_RECORDS_SHOWN])


@dataclass(frozen=True)
class ChangeRow:
    """One change between two moments, with the record it concerns as it stood after it."""

    realm: str
    change: Change
    record: MemoryRecord

    @property
    def key(self) -> tuple[int, str]:
        """The keyset position: the moment, then the record (one record changes once per batch)."""
        return (self.change.at_ms, self.record.id)


def changes_between(*, access: Access, realm: str | None, from_ms: int, to_ms: int) -> list[ChangeRow]:
    """Every change after ``from_ms`` up to ``to_ms`` the caller may see, oldest first (docs/history.md §5).

    A change is seen by those who may see its record as it stood right after the change, so a
    record's quarantine, and its release, are a reviewer's.
    """
    out: list[ChangeRow] = []
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            changes = realm_history(name).between(from_ms, to_ms)
            ids = {change.memory_id for change in changes}
            rows = {row["memory_id"]: decode_record(name, row)
                    for row in list_rows(realm_alias(name), name).iterator() if row["memory_id"] in ids}
            for change in changes:
                record = rows.get(change.memory_id)
                if record is None:
                    continue
                record = _as_it_stood(record, RecordState(change.status, change.status_detail, change.at_ms))
                if record_visible(access, record):
                    out.append(ChangeRow(name, change, record))
    out.sort(key=lambda row: row.key)
    return out


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
    every = changes_between(access=access, realm=realm, from_ms=from_ms, to_ms=to_ms)
    counts = Counter(row.change.kind for row in every)
    after = [row for row in every if cursor is None or row.key > cursor.key()]
    page = after[:limit]
    more = len(after) > limit and page
    diffs = {(row.realm, row.record.id): change_diff(access, row) for row in page if row.change.kind == SUPERSEDED}
    return ChangesPage(page, {kind: counts[kind] for kind in CHANGE_KINDS}, len(every),
                       Cursor(page[-1].change.at_ms, page[-1].record.id) if more else None, diffs)


def change_diff(access: Access, row: ChangeRow) -> VersionDiff | None:
    """A superseded record's word diff to its successor; None unless the caller may read both."""
    try:
        return version_diff(access=access, realm=row.realm, memory_id=row.change.other_id or "")
    except (AccessDenied, NotFound, InvalidParams):
        return None
