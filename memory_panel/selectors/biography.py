"""One record's biography: the row, its supersede lineage and its injections (docs/store-format.md §5.2)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_panel.errors import AccessDenied, NotFound
from memory_panel.signals import require_body_read_recorded
from memory_panel.selectors.injections import InjectionRow, record_injections
from memory_panel.store.realm_index import realm_index
from memory_panel.store.realms import realm_alias
from memory_panel.store.records import MemoryRecord, decode_record
from memory_panel.store.rows import full_rows, list_rows, panel_realms, realm_read, records_by_id
from memory_panel.visibility import identity_visible, record_denial_action, record_visible
from memory_panel.wire.params import CHAIN_MAX

if TYPE_CHECKING:
    from access.caller import Access


@dataclass(frozen=True)
class RecordBiography:
    realm: str
    record: MemoryRecord
    chain: list[MemoryRecord]
    injections: list[InjectionRow]


def record_get(*, access: Access, memory_id: str, realm: str | None) -> RecordBiography:
    """The first realm holding ``memory_id`` wins; visibility is checked once the scope is known."""
    for name in panel_realms(realm):
        bio = None
        with realm_read(name, alone=realm is not None):
            bio = _biography(access, name, memory_id)
        if bio is not None:
            return bio
    raise NotFound(f"unknown memory record '{memory_id}'")


def _biography(access: Access, realm: str, memory_id: str) -> RecordBiography | None:
    alias = realm_alias(realm)
    row = full_rows(alias, realm).filter(memory_id=memory_id).first()
    if row is None:
        return None
    record = decode_record(realm, row)
    if not record_visible(access, record):
        raise AccessDenied(record_denial_action(access, record), record.id)
    require_body_read_recorded(access=access, records=[record])
    chain = supersede_chain(access=access, realm=realm, memory_id=memory_id)
    # docs/access.md §2.8: who was given the record, and in which session, is that identity's business.
    injections = [row for row in record_injections(alias, realm, memory_id) if identity_visible(access, row.identity)]
    return RecordBiography(realm, record, chain, injections)


def supersede_chain(*, access: Access, realm: str, memory_id: str, max_len: int = CHAIN_MAX) -> list[MemoryRecord]:
    """Oldest-first lineage through ``memory_id`` (docs/store-format.md §5.2), body-free, the links
    the caller may see. The walk itself goes through hidden links, so a chain keeps its order."""
    alias = realm_alias(realm)
    rows = list_rows(alias, realm)

    def load(record_id: str) -> MemoryRecord | None:
        row = rows.filter(memory_id=record_id).first()
        return decode_record(realm, row) if row else None

    start = load(memory_id)
    if start is None:
        return []
    seen = {start.id}
    ancestors = _follow(load, start.supersedes, _prior_id, seen, budget=max_len - 1)
    successors = _follow(load, _successor_id(start), _successor_id, seen, budget=max_len - 1 - len(ancestors))
    chain = [*reversed(ancestors), start, *successors]
    tip = chain[-1]
    # Uncommitted claimants: rows pointing at the tip that the tip does not name as its successor.
    index = realm_index(realm)
    if index is not None:
        claimants = records_by_id(alias, realm, index.claimant_ids(tip.id))
    else:
        claimants = [decode_record(realm, row) for row in rows.filter(supersedes=tip.id).order_by("created_at_ms", "memory_id")]
    chain += [c for c in claimants if c.id not in seen][: max(0, max_len - len(chain))]
    return [link for link in chain if record_visible(access, link)]


def _prior_id(record: MemoryRecord) -> str | None:
    return record.supersedes


def _successor_id(record: MemoryRecord) -> str | None:
    return record.status_detail if record.status == "superseded" else None


def _follow(
    load: Callable[[str], MemoryRecord | None],
    first_id: str | None,
    next_id: Callable[[MemoryRecord], str | None],
    seen: set[str],
    *,
    budget: int,
) -> list[MemoryRecord]:
    """Links reached one step at a time from ``first_id``; a missing row or a loop ends the walk."""
    links: list[MemoryRecord] = []
    link_id = first_id
    while link_id and len(links) < budget:
        link = load(link_id)
        if link is None or link.id in seen:
            break
        seen.add(link.id)
        links.append(link)
        link_id = next_id(link)
    return links


def claimant_ids(chain: list[MemoryRecord]) -> set[str]:
    """Chain members whose prior was not marked superseded by them: uncommitted claimants."""
    by_id = {link.id: link for link in chain}
    return {
        link.id
        for link in chain
        if link.supersedes
        and (prior := by_id.get(link.supersedes)) is not None
        and not (prior.status == "superseded" and prior.status_detail == link.id)
    }
