"""The quarantine queue and the promotions waiting at the gate (docs/store-format.md §5.3, §5.5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_panel.models import PendingPromotion
from memory_panel.store.realm_index import realm_index
from memory_panel.store.realms import realm_alias
from memory_panel.store.records import MemoryRecord, decode_record
from memory_panel.store.rows import list_rows, panel_realms, realm_read, records_by_id
from memory_panel.visibility import hidden_scope_kinds, promotion_visible, record_visible, require_review

if TYPE_CHECKING:
    from mobkit_console.access.caller import Access

# Rows read per round trip while filling the queue with rows the caller may see.
FILL_BATCH_MIN = 64

@dataclass(frozen=True)
class PendingPromotionRow:
    realm: str
    pending_id: str
    record_id: str
    scope_kind: str
    scope_key: str
    rationale: str | None
    status: str
    created_at_ms: int


@dataclass(frozen=True)
class QuarantineQueue:
    records: list[MemoryRecord]
    pending_promotions: list[PendingPromotionRow]
    realms: list[str]


def quarantine_queue(*, access: Access, realm: str | None, limit: int) -> QuarantineQueue:
    require_review(access)
    realms = panel_realms(realm)
    records: list[MemoryRecord] = []
    promotions: list[PendingPromotionRow] = []
    read: list[str] = []
    for name in realms:
        with realm_read(name, alone=realm is not None):
            alias = realm_alias(name)
            # The review grant is necessary, not sufficient: each row still needs its scope's read grant.
            queued = _visible_quarantined(access, alias, name, limit)
            gated = [
                PendingPromotionRow(realm=name, **row)
                for row in PendingPromotion.objects.using(alias)
                .filter(status="pending")
                .order_by("created_at_ms", "pending_id")
                .values("pending_id", "record_id", "scope_kind", "scope_key", "rationale", "status", "created_at_ms")
                if promotion_visible(access, row["scope_kind"], row["scope_key"])
            ]
            records += queued
            promotions += gated
            read.append(name)
    records.sort(key=lambda r: (r.created_at_ms, r.id), reverse=True)
    return QuarantineQueue(records[:limit], promotions, read)


def _visible_quarantined(access: Access, alias: str, realm: str, limit: int) -> list[MemoryRecord]:
    """The newest quarantined rows the caller may see, up to ``limit``, read on past hidden ones."""
    hidden_kinds = hidden_scope_kinds(access)
    index = realm_index(realm)
    queryset = (
        list_rows(alias, realm)
        .filter(status_kind="quarantined")
        .exclude(scope_kind__in=hidden_kinds)
        .order_by("-created_at_ms", "-memory_id")
    )
    batch = max(limit, FILL_BATCH_MIN)
    taken: list[MemoryRecord] = []
    offset = 0
    while len(taken) < limit:
        if index is not None:
            ids = index.quarantined_ids(hidden_scope_kinds=hidden_kinds, offset=offset, limit=batch)
            chunk, read = records_by_id(alias, realm, ids), len(ids)
        else:
            chunk = [decode_record(realm, row) for row in queryset[offset : offset + batch]]
            read = len(chunk)
        taken += [record for record in chunk if record_visible(access, record)]
        if read < batch:
            break
        offset += batch
    return taken[:limit]
