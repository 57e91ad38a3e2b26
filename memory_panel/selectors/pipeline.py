"""Pipeline: how memory moves, PROPOSED → HELD → PENDING GATE → COMMITTED · QUARANTINED (docs/ui.md §4).

Real counts over the whole store, each limited to the target scopes the caller may read; the
quarantined count is a reviewer's only (docs/access.md §2.4), others get "no grant", never a zero.
The review queue lists each flagged record once, with how many open verdicts name it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Max, Min

from memory_panel.models import DreamAuditVerdict
from memory_panel.selectors.holdings import realm_holdings
from memory_panel.selectors.named_records import first_visible, unreadable_record_ids
from memory_panel.store.realm_memo import kept_rows, realm_memo, realms_memo
from memory_panel.store.realms import realm_alias, store_format
from memory_panel.store.rows import merged_realm_rows, panel_realms, realm_cursor, realm_rows
from memory_panel.visibility import require_realm_history, scope_visible, sees_quarantined

if TYPE_CHECKING:
    from access.caller import Access


@dataclass(frozen=True)
class Conveyor:
    proposed: int  # proposals pending a dream verdict
    held: int  # proposals the steward held (a tainted accept outside mob scope, docs/store-format.md §7.2)
    pending_gate: int  # staged promotions waiting for the gate
    committed: int  # accepted proposals and committed promotions
    quarantined: int | None  # None: the caller may not review quarantine
    taints: dict[tuple[str, str], str]  # (realm, proposal_id) → the propose-time taint of waiting proposals
    realms: list[str]


# Proposal statuses the conveyor counts under their own name.
_PROPOSAL_COUNTED = ("pending", "held", "accepted", "gate", "committed")


def pipeline_conveyor(*, access: Access, realm: str | None) -> Conveyor:
    require_realm_history(access)
    with_quarantined = sees_quarantined(access)
    names = panel_realms(realm)
    tallies, waiting, realms = realms_memo(
        names, ("conveyor", with_quarantined), partial(_every_tally, realm, names, with_quarantined)
    )
    # Summed over realms by scope first, so the caller's scopes are checked once per scope, not per realm.
    counts: Counter[str] = Counter()
    for (counter, kind, key), count in tallies.items():
        if scope_visible(access, kind, key):
            counts[counter] += count
    taints = {(name, proposal_id): taint for name, proposal_id, kind, key, taint in waiting if scope_visible(access, kind, key)}
    return Conveyor(
        proposed=counts["pending"],
        held=counts["held"],
        pending_gate=counts["gate"],
        committed=counts["accepted"] + counts["committed"],
        quarantined=counts["quarantined"] if with_quarantined else None,
        taints=taints,
        realms=realms,
    )


Tallies = dict[tuple[str, str, str], int]  # (counter, scope_kind, scope_key) → count
Waiting = list[tuple[str, str, str, str, str]]  # (realm, proposal_id, scope_kind, scope_key, taint)


def _every_tally(
    realm: str | None, names: list[str], with_quarantined: bool
) -> tuple[tuple[Tallies, Waiting, list[str]], bool]:
    """Every realm's conveyor counts by scope and its waiting taints, before any caller's scopes
    are applied; kept unless a realm could not be read (docs/realm-failures.md §1: it adds nothing)."""
    parts, realms = realm_rows(realm, lambda name: [_realm_tallies(name, with_quarantined)], names=names)
    tallies: Counter[tuple[str, str, str]] = Counter()
    waiting: Waiting = []
    for part_tallies, part_waiting in parts:
        tallies.update(part_tallies)
        waiting += part_waiting
    return (dict(tallies), waiting, realms), len(realms) == len(names)


def _realm_tallies(name: str, with_quarantined: bool) -> tuple[Counter[tuple[str, str, str]], Waiting]:
    tallies: Counter[tuple[str, str, str]] = Counter()
    proposals, promotions, waiting = realm_memo(name, "conveyor", partial(_conveyor_rows, name))
    for kind, key, status, count in proposals:
        if status in _PROPOSAL_COUNTED:
            tallies[(status, kind, key)] += count
    for kind, key, status, count in promotions:
        if status in ("pending", "committed"):
            tallies[("gate" if status == "pending" else "committed", kind, key)] += count
    for scope in realm_holdings(name, with_quarantined=with_quarantined):
        tallies[("quarantined", scope.scope_kind, scope.scope_key)] += scope.quarantined
    return tallies, [(name, proposal_id, kind, key, taint) for proposal_id, kind, key, taint in waiting]


def _conveyor_rows(name: str) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """Proposals and promotions counted by scope and status, and the waiting proposals' taints."""
    cursor = realm_cursor(name)
    return (
        cursor.execute("SELECT scope_kind, scope_key, status, COUNT(*) FROM proposals GROUP BY 1, 2, 3").fetchall(),
        cursor.execute(
            "SELECT scope_kind, scope_key, status, COUNT(*) FROM pending_promotions GROUP BY 1, 2, 3"
        ).fetchall(),
        cursor.execute(
            "SELECT proposal_id, scope_kind, scope_key, taint FROM proposals"
            " WHERE taint IS NOT NULL AND status IN ('pending', 'held')"
        ).fetchall(),
    )


@dataclass(frozen=True)
class ReviewItem:
    """One record in the review queue: its newest open verdict, and how many open verdicts name it."""

    realm: str
    record_id: str
    verdict: str  # the newest open verdict's
    rationale: str
    run_id: str
    created_at_ms: int  # when the newest open verdict was written
    first_at_ms: int  # when the oldest open one was
    open_verdicts: int


def review_queue(*, access: Access, realm: str | None, limit: int) -> tuple[list[ReviewItem], list[str]]:
    """The newest ``limit`` records with open usage verdicts, each once (docs/panel-tabs.md §5, its review queue).

    The steward judges every record again at each dream, so one unused record collects one open
    verdict per run; ``panel/audit_verdicts`` keeps MobKit's row per verdict, the page one per record.
    """
    require_realm_history(access)
    merged, realms = merged_realm_rows(realm, "review_items", _kept_review_items, order=_queue_order)
    if merged is not None:
        return first_visible(iter(merged), keep=partial(_readable_across, access), limit=limit), realms

    def items(name: str) -> list[ReviewItem]:
        readable = partial(_readable_items, access, name)
        kept = _kept_review_items(name)
        if kept is not None:
            return first_visible(iter(kept), keep=readable, limit=limit)
        records, open_rows = _open_verdicts(name)
        return first_visible(
            records.iterator(), keep=lambda batch: readable(_review_items(name, open_rows, batch)), limit=limit
        )

    out, realms = realm_rows(realm, items)
    out.sort(key=_queue_order)
    return out[:limit], realms


def _kept_review_items(name: str) -> list[ReviewItem] | None:
    return realm_memo(name, "review_items", partial(_every_review_item, name))


def _queue_order(item: ReviewItem) -> tuple[int, str]:
    return -item.created_at_ms, item.record_id


def _open_verdicts(name: str):
    """The records with open verdicts, newest verdict first, with their counts; and the open verdicts."""
    open_rows = DreamAuditVerdict.objects.using(realm_alias(name)).filter(resolved_at_ms__isnull=True)
    records = (
        open_rows.values("record_id")
        .annotate(open_verdicts=Count("run_id"), newest=Max("created_at_ms"), first=Min("created_at_ms"))
        .order_by("-newest", "record_id")
    )
    return records, open_rows


def _every_review_item(name: str) -> list[ReviewItem] | None:
    """Every record of the realm with open verdicts, in the queue's order; None when there are too
    many to keep (``kept_rows``)."""
    if not store_format(name).has("dream_audit_verdicts"):
        return []
    records, open_rows = _open_verdicts(name)
    rows = kept_rows(records.iterator())
    return None if rows is None else _review_items(name, open_rows, rows)


def _review_items(name: str, open_rows, rows: list[dict[str, Any]]) -> list[ReviewItem]:
    """The queue's items for these records, each with its newest open verdict."""
    newest = {
        verdict.record_id: verdict
        for verdict in open_rows.filter(record_id__in=[row["record_id"] for row in rows]).order_by("created_at_ms", "run_id")
    }  # ascending, so each record keeps its newest
    return [
        ReviewItem(
            realm=name,
            record_id=row["record_id"],
            verdict=newest[row["record_id"]].verdict,
            rationale=newest[row["record_id"]].rationale,
            run_id=newest[row["record_id"]].run_id,
            created_at_ms=row["newest"],
            first_at_ms=row["first"],
            open_verdicts=row["open_verdicts"],
        )
        for row in rows
    ]


def _readable_across(access: Access, items: list[ReviewItem]) -> list[ReviewItem]:
    """``_readable_items`` of a merged batch, realm by realm."""
    shown = {
        (item.realm, item.record_id)
        for name in {item.realm for item in items}
        for item in _readable_items(access, name, [item for item in items if item.realm == name])
    }
    return [item for item in items if (item.realm, item.record_id) in shown]


def _readable_items(access: Access, name: str, items: list[ReviewItem]) -> list[ReviewItem]:
    # docs/access.md §2.8: a verdict names its record and says why; only for its readers.
    hidden = unreadable_record_ids(access=access, realm=name, ids=(item.record_id for item in items))
    return [item for item in items if item.record_id not in hidden]
