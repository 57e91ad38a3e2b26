"""Knowledge: what one identity (or one mob) knows, composed by scope, and what was injected into it.

Composition counts are real store totals (the per-scope holdings, from the realm index when the
realm has one), not counts over a loaded page as in MobKit's panel (docs/panel-tabs.md §4).
The budget gauge measures rendered injection blocks the way the runtime budgets them
(docs/runtime-surfaces.md §4.7: 2 KiB of body per record, 20 KiB per assembly, 60 KiB per
session), and the history marks DUP rows by MobKit's rule (docs/panel-tabs.md §4).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from memory_panel.models import Injection
from memory_panel.selectors.holdings import ScopeHoldings, realm_holdings
from memory_panel.selectors.injections import InjectionRow
from memory_panel.selectors.recall import ASSEMBLY_MAX_BYTES, BODY_MAX_BYTES, render_injection_block
from memory_panel.store.realm_memo import realm_memo, realms_memo
from memory_panel.store.realms import realm_alias
from memory_panel.store.records import MemoryRecord
from memory_panel.store.rows import merged_realm_rows, named_rows, realm_read
from memory_panel.wording import count_words
from memory_panel.visibility import (
    sees_quarantined,
    SCOPE_READ_ACTION,
    record_visible,
    require_identity_memory,
    require_record_list,
    scope_kind_readable,
    scope_visible,
)

if TYPE_CHECKING:
    from access.caller import Access

SESSION_MAX_BYTES = 60 * 1024  # docs/runtime-surfaces.md §4.7: the budgeted per-turn session cap
HISTORY_LIMIT = 50


@dataclass(frozen=True)
class CompositionPart:
    scope_kind: str
    scope_key: str | None  # None: every scope of the kind the caller may read
    records: int | None  # active records; None when the caller may not read this kind
    needs: str | None = None
    note: str = ""


@dataclass(frozen=True)
class HistoryRow:
    injection: InjectionRow
    title: str | None  # None: the injected record is not readable by the caller
    dup: bool


@dataclass(frozen=True)
class Gauge:
    name: str
    used: int
    limit: int
    detail: str

    @property
    def fraction(self) -> str:
        return f"{min(self.used / self.limit, 1.0):.3f}" if self.limit else "0"


@dataclass(frozen=True)
class KnowledgeLens:
    identity: str | None
    mob: str | None
    mobs: list[str]
    composition: list[CompositionPart]
    history: list[HistoryRow] = field(default_factory=list)
    hidden_injections: int = 0
    gauges: list[Gauge] = field(default_factory=list)
    realms: list[str] = field(default_factory=list)


def knowledge_lens(*, access: Access, realm: str | None, identity: str | None, mob: str | None) -> KnowledgeLens:
    """The lens for ``identity`` (else ``mob``; neither: the first identity the caller may read)."""
    # The realms read from here on are the ones whose holdings could be read (docs/realm-failures.md §1).
    with_quarantined = sees_quarantined(access)
    held, realms = merged_realm_rows(
        realm, ("holdings", with_quarantined), partial(realm_holdings, with_quarantined=with_quarantined)
    )
    held = held or []
    scopes = _visible_scopes(access, held)
    identities = sorted({s.scope_key for s in scopes if s.scope_kind == "identity"})
    mobs = sorted({s.scope_key for s in scopes if s.scope_kind == "mob"})
    if identity is None and mob is None and identities:
        identity = identities[0]
    if identity is not None:
        require_identity_memory(access, identity)
    elif mob is not None:
        require_record_list(access, scope_kind="mob", scope_key=mob)
    lens = KnowledgeLens(identity, mob, mobs, _composition(access, scopes, identity, mob), realms=realms)
    if identity is None:
        return lens
    history, hidden, records = _history(access, realms, identity, alone=realm is not None)
    return KnowledgeLens(
        identity, mob, mobs, lens.composition, history, hidden, _gauges(history, records, identity), realms
    )


def _visible_scopes(access: Access, held: list[ScopeHoldings]) -> list[ScopeHoldings]:
    """The scopes the caller may read, each ``(kind, key)`` decided once: across 500 realms the same
    agents' scopes come 500 times, and the decision does not depend on the realm."""
    decided: dict[tuple[str, str], bool] = {}
    visible = []
    for s in held:
        scope = (s.scope_kind, s.scope_key)
        if scope not in decided:
            decided[scope] = scope_visible(access, *scope)
        if decided[scope]:
            visible.append(s)
    return visible


def _composition(
    access: Access, scopes: list[ScopeHoldings], identity: str | None, mob: str | None
) -> list[CompositionPart]:
    """identity ∪ mob ∪ operator ∪ realm: what recall and injection may draw on, as active counts."""
    # Summed in one pass: per scope, and per kind under the key None.
    active: dict[tuple[str, str | None], int] = defaultdict(int)
    for s in scopes:
        active[(s.scope_kind, s.scope_key)] += s.active
        active[(s.scope_kind, None)] += s.active

    def part(kind: str, key: str | None, note: str = "") -> CompositionPart:
        if not scope_kind_readable(access, kind) or (key is not None and not scope_visible(access, kind, key)):
            return CompositionPart(kind, key, None, needs=SCOPE_READ_ACTION[kind], note=note)
        return CompositionPart(kind, key, active[(kind, key)], note=note)

    parts = [part("identity", identity)] if identity is not None else []
    if mob is not None:
        parts.append(part("mob", mob))
    else:
        # Which mobs an identity belongs to is the runtime's roster, not the store's.
        parts.append(part("mob", None, note="all mobs — membership is the runtime's roster"))
    parts.append(part("operator", None))
    parts.append(part("realm", None))
    return parts


def _history(
    access: Access, realms: list[str], identity: str, *, alone: bool
) -> tuple[list[HistoryRow], int, dict[tuple[str, str], MemoryRecord]]:
    """The identity's newest injections, DUP when the next-older row repeats the record; how many
    were hidden; and the records they name (read once, for the gauges too)."""
    rows = realms_memo(realms, ("injections", identity), partial(_newest_across, realms, identity, alone=alone))
    records = _records(rows)
    history: list[HistoryRow] = []
    hidden = 0
    for index, row in enumerate(rows):
        record = records.get((row.realm, row.record_id))
        if record is not None and not record_visible(access, record):
            hidden += 1
            continue
        older = rows[index + 1] if index + 1 < len(rows) else None
        # docs/panel-tabs.md §4: keyed by identity only (one identity here), adjacent rows only.
        dup = older is not None and older.record_id == row.record_id
        history.append(HistoryRow(row, record.title if record is not None else None, dup))
    return history, hidden, records


def _newest_across(realms: list[str], identity: str, *, alone: bool) -> tuple[list[InjectionRow], bool]:
    """The identity's newest injections over ``realms``; kept unless a realm could not be read."""
    rows: list[InjectionRow] = []
    read = 0
    for name in realms:
        with realm_read(name, alone=alone):
            rows += realm_memo(name, ("injections", identity), partial(_newest_injections, name, identity))
            read += 1
    rows.sort(key=lambda row: row.at_ms, reverse=True)
    return rows[:HISTORY_LIMIT], read == len(realms)


def _newest_injections(name: str, identity: str) -> list[InjectionRow]:
    return [
        InjectionRow(realm=name, **row)
        for row in Injection.objects.using(realm_alias(name))
        .filter(identity=identity)
        .order_by("-at_ms", "-injection_id")
        .values("record_id", "identity", "session_key", "surface", "at_ms")[:HISTORY_LIMIT]
    ]


def _records(rows: list[InjectionRow]) -> dict[tuple[str, str], MemoryRecord]:
    by_realm: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        by_realm[row.realm].add(row.record_id)
    return {(name, record.id): record for name, ids in by_realm.items() for record in named_rows(name, ids, with_body=True)}


def _gauges(history: list[HistoryRow], read: dict[tuple[str, str], MemoryRecord], identity: str) -> list[Gauge]:
    """Rendered bytes of the visible history, against the runtime's three budgets."""
    rows = [h.injection for h in history]
    records = {(row.realm, row.record_id): read[key] for row in rows if (key := (row.realm, row.record_id)) in read}
    assemblies: dict[tuple, list[MemoryRecord]] = defaultdict(list)
    for row in reversed(rows):  # oldest first: blocks in the order they were assembled
        record = records.get((row.realm, row.record_id))
        if record is not None:
            assemblies[(row.realm, row.session_key, row.surface, row.at_ms)].append(record)
    assembly_bytes = {
        key: len(render_injection_block(identity=identity, realm=key[0], records=block).encode("utf-8"))
        for key, block in assemblies.items()
    }
    sessions: dict[str, int] = defaultdict(int)
    for key, size in assembly_bytes.items():
        if key[1] is not None:
            sessions[key[1]] += size
    latest = max(assembly_bytes, key=lambda key: key[3], default=None)
    busiest = max(sessions, key=sessions.get, default=None)
    cut = [r for r in records.values() if len(" ".join((r.body or "").split()).encode("utf-8")) > BODY_MAX_BYTES]
    return [
        Gauge("per record", max((len((r.body or "").encode("utf-8")) for r in records.values()), default=0),
              BODY_MAX_BYTES, f"{len(cut)} of {count_words(len(records), 'injected record')} cut at 2 KiB of body"),
        Gauge("per assembly", assembly_bytes[latest] if latest else 0, ASSEMBLY_MAX_BYTES,
              f"the newest assembly ({latest[2]}, {count_words(len(assemblies[latest]), 'record')})" if latest else "no assembly yet"),
        Gauge("per session", sessions[busiest] if busiest else 0, SESSION_MAX_BYTES,
              f"the busiest session, {busiest}" if busiest else "no session-keyed injection yet"),
    ]
