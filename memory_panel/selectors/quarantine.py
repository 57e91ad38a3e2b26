"""The quarantine queue and the promotions waiting at the gate (docs/store-format.md §5.3, §5.5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from memory_panel.errors import InvalidParams
from memory_panel.models import PendingPromotion
from memory_panel.signals import require_body_read_recorded
from memory_panel.store.all_realms_index import PROMOTION_COLUMNS, AllRealmsIndex, all_realms_index
from memory_panel.store.realm_index import realm_index
from memory_panel.store.realm_memo import realm_memo
from memory_panel.store.realms import realm_alias
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.records import MemoryRecord, decode_record
from memory_panel.store.rows import (
    filtered_list_rows,
    named_rows,
    panel_realms,
    realm_cursor,
    realm_read,
    records_by_id,
    skip_unreadable_realm,
)
from memory_panel.visibility import promotion_visible, record_visible, require_review, scope_checker

if TYPE_CHECKING:
    from access.caller import Access

# Rows read per round trip while filling the queue with rows the caller may see.
FILL_BATCH_MIN = 64
# The most quarantined entries of the console-wide index read in one round trip.
FILL_BATCH_MAX = 4096
# The queue's two orders; MobKit's is the newest first (docs/wire-contract.md §1.2 (c)).
QUEUE_ORDERS = ("newest", "oldest")
# A preview is the body's first lines: enough to judge a row without opening it.
PREVIEW_LINES = 3
PREVIEW_CHARS = 240

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
    # (realm, memory_id) -> the body's first lines; filled only when asked (the page, never the RPC).
    previews: dict[tuple[str, str], str] = field(default_factory=dict)


def parse_queue_order(raw: str | None) -> str:
    order = (raw or "").strip() or QUEUE_ORDERS[0]
    if order not in QUEUE_ORDERS:
        raise InvalidParams(f"order must be one of {', '.join(QUEUE_ORDERS)}, not '{order}'")
    return order


def quarantine_queue(
    *, access: Access, realm: str | None, limit: int, order: str = "newest", with_previews: bool = False
) -> QuarantineQueue:
    """The queue for a reviewer; ``with_previews`` adds each row's first lines of text.

    The text is safe to return here because the entry gate is the review grant and every row
    passed ``record_visible`` (which asks it again for quarantined rows): reviewers only.
    """
    require_review(access)
    oldest_first = parse_queue_order(order) == "oldest"
    records: list[MemoryRecord] = []
    promotions: list[PendingPromotionRow] = []
    read: list[str] = []
    names = panel_realms(realm)
    if realm is None:
        # docs/realm-index.md §10: the small realms' queue and gate from the console-wide index.
        index = all_realms_index(names, on_failure=skip_unreadable_realm)
        records += _listed_quarantined(access, index, limit, oldest_first)
        promotions += [
            PendingPromotionRow(realm=name, **row)
            for name, row in index.pending_promotions()
            if promotion_visible(access, row["scope_kind"], row["scope_key"])
        ]
        read += index.listed
        names = [name for name in names if name not in index.listed]
    for name in names:
        with realm_read(name, alone=realm is not None):
            alias = realm_alias(name)
            # The review grant is necessary, not sufficient: each row still needs its scope's read grant.
            queued = _visible_quarantined(access, alias, name, limit, oldest_first)
            gated = [
                PendingPromotionRow(realm=name, **row)
                for row in PendingPromotion.objects.using(alias)
                .filter(status="pending")
                .order_by("created_at_ms", "pending_id")
                .values(*PROMOTION_COLUMNS)
                if promotion_visible(access, row["scope_kind"], row["scope_key"])
            ]
            records += queued
            promotions += gated
            read.append(name)
    read.sort()
    promotions.sort(key=lambda row: (row.realm, row.created_at_ms, row.pending_id))  # realm by realm, each in its own order
    records.sort(key=lambda r: (r.created_at_ms, r.id), reverse=not oldest_first)
    shown = records[:limit]
    if not with_previews:
        return QuarantineQueue(shown, promotions, read)
    require_body_read_recorded(access=access, records=shown)
    return QuarantineQueue(shown, promotions, read, _previews(shown))


def _previews(records: list[MemoryRecord]) -> dict[tuple[str, str], str]:
    previews: dict[tuple[str, str], str] = {}
    for name in {record.realm for record in records}:
        named = named_rows(name, (record.id for record in records if record.realm == name), with_body=True)
        previews.update(((name, row.id), _first_lines((row.body or "")[: PREVIEW_CHARS + 1])) for row in named)
    return previews


def _first_lines(body: str) -> str:
    """Up to PREVIEW_LINES non-blank lines, PREVIEW_CHARS at most, "…" when the body goes on.

    ``body`` was read as its first PREVIEW_CHARS + 1 characters, so a longer one means more follows.
    """
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    text = "\n".join(lines[:PREVIEW_LINES])[:PREVIEW_CHARS]
    return f"{text}…" if len(lines) > PREVIEW_LINES or len(body) > PREVIEW_CHARS else text


def _listed_quarantined(access: Access, index: AllRealmsIndex, limit: int, oldest_first: bool) -> list[MemoryRecord]:
    """The first quarantined rows of the realms the console-wide index holds, in the queue's order.

    Entries of scopes the caller may not read are skipped before any realm is opened, so only the
    realms of the rows shown are read; the batch doubles while scopes hide most of it.
    """
    filters = RecordFilter(status="quarantined").for_caller(access)
    scope_ok = scope_checker(access)
    taken: list[MemoryRecord] = []
    offset, batch = 0, limit
    while len(taken) < limit:
        entries = index.queue_entries(filters, offset=offset, limit=batch, oldest_first=oldest_first)
        readable = [entry for entry in entries if scope_ok(entry.scope_kind, entry.scope_key)]
        taken += [record for record in index.records(readable) if record_visible(access, record)]
        if len(entries) < batch:
            break
        offset += batch
        batch = min(batch * 2, FILL_BATCH_MAX)
    return taken[:limit]


def _visible_quarantined(
    access: Access, alias: str, realm: str, limit: int, oldest_first: bool
) -> list[MemoryRecord]:
    """The first quarantined rows (in the queue's order) the caller may see, up to ``limit``."""
    filters = RecordFilter(status="quarantined").for_caller(access)
    index = realm_index(realm)
    direction = "" if oldest_first else "-"
    queryset = filtered_list_rows(alias, realm, filters).order_by(f"{direction}created_at_ms", f"{direction}memory_id")
    batch = max(limit, FILL_BATCH_MIN)
    taken: list[MemoryRecord] = []
    offset = 0
    while len(taken) < limit:
        if index is not None:
            ids = index.queue_ids(filters, offset=offset, limit=batch, oldest_first=oldest_first)
            chunk, read = records_by_id(alias, realm, ids), len(ids)
        else:
            chunk = [decode_record(realm, row) for row in queryset[offset : offset + batch]]
            read = len(chunk)
        taken += [record for record in chunk if record_visible(access, record)]
        if read < batch:
            break
        offset += batch
    return taken[:limit]


@dataclass(frozen=True)
class QuarantineBacklog:
    records: int  # quarantined records waiting for review
    oldest_created_at_ms: int | None  # when the longest-waiting one was written; None when none waits


def quarantine_backlog(realm: str) -> QuarantineBacklog:
    """How many of the realm's records wait in quarantine, and since when the oldest has.

    No caller and no rows: a count and a time, for the operators' metrics (docs/serving.md §8).
    Kept while the realm file stands still, so asking it of 500 quiet realms reads none of them.
    """
    return realm_memo(realm, "quarantine_backlog", partial(_quarantine_backlog, realm))


def _quarantine_backlog(realm: str) -> QuarantineBacklog:
    index = realm_index(realm)  # the realm has no (status, created) index of its own
    if index is not None:
        records, oldest = index.quarantine_backlog()
    else:
        records, oldest = realm_cursor(realm).execute(
            "SELECT COUNT(*), MIN(created_at_ms) FROM records WHERE status_kind = 'quarantined'"
        ).fetchone()
    return QuarantineBacklog(records, oldest)
