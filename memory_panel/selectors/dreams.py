"""Steward dream runs: rebuilt from the audit table, and their durable verdict sheets (docs/store-format.md §5.4)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from memory_panel.models import Audit, DreamAuditVerdict, DreamRun
from memory_panel.selectors.named_records import first_visible, unreadable_record_ids
from memory_panel.store.all_realms_index import all_realms_index
from memory_panel.store.realm_index import realm_index
from memory_panel.store.realm_memo import realm_memo
from memory_panel.store.realms import realm_alias, realm_names, store_format
from memory_panel.store.records import parse_json_text
from memory_panel.store.rows import merged_realm_rows, realm_rows, skip_unreadable_realm
from memory_panel.visibility import require_realm_history

if TYPE_CHECKING:
    from access.caller import Access

DREAM_AUDIT_SCAN = 5000  # docs/store-format.md §5.4
DREAM_MEMORY_IDS = 12
DREAM_RATIONALES = 6
# docs/timeline-live.md §2: where a running dream is looked for, and how long one may be quiet.
RUNNING_AUDIT_SCAN = 2000  # a realm without an index: its newest audit rows, whoever wrote them
RUNNING_STEWARD_ROWS = 256  # an indexed realm: its newest steward audit rows
RUNNING_QUIET_MS = 15 * 60 * 1000
RUNNING_MAX = 8

@dataclass
class DreamSummary:
    realm: str
    run_id: str
    first_op_at_ms: int
    last_op_at_ms: int
    ops: int = 0
    op_kinds: dict[str, int] = field(default_factory=dict)
    quarantined_ops: int = 0
    memory_ids: list[str] = field(default_factory=list)
    rationales: list[str] = field(default_factory=list)
    # Every (memory_id, rationale) of the run's audit rows, newest first: the two samples above
    # are drawn from it for one caller (``_sampled``), so they never name a record it may not read.
    touched: list[tuple[str | None, str | None]] = field(default_factory=list, repr=False)


def dream_history(*, access: Access, realm: str | None, limit: int) -> tuple[list[DreamSummary], list[str]]:
    """Steward runs grouped by run_id from the newest 5,000 audit rows per realm (docs/store-format.md §5.4)."""
    require_realm_history(access)
    if realm is None:
        runs, realms = _newest_runs_of_every_realm(access, limit)
    else:
        runs, realms = realm_rows(realm, lambda name: _sampled(access, name, _kept_dreams(name, limit)))
    runs.sort(key=lambda run: run.last_op_at_ms, reverse=True)
    return runs[:limit], realms


def _newest_runs_of_every_realm(access: Access, limit: int) -> tuple[list[DreamSummary], list[str]]:
    """The newest ``limit`` runs across realms, reading only the realms that can hold one of them.

    docs/realm-index.md §10: the console-wide index knows, for each small realm, the latest a run
    of it can have ended; realms are read latest first until the next cannot beat the runs found.
    A realm it does not hold (a large one) is always read.
    """
    names = realm_names()
    index = all_realms_index(names, on_failure=skip_unreadable_realm)
    newest = index.newest_dreams()
    unlisted = [name for name in names if name not in index.listed]
    candidates = unlisted + sorted(newest, key=lambda name: newest[name], reverse=True)
    runs: list[DreamSummary] = []
    read: list[str] = []
    for name in candidates:
        if name in newest and len(runs) >= limit and newest[name] < runs[limit - 1].last_op_at_ms:
            break  # neither this realm nor any after it holds a run later than the runs found
        found, covered = realm_rows(None, lambda name: _sampled(access, name, _kept_dreams(name, limit)), names=[name])
        runs = sorted(runs + found, key=lambda run: run.last_op_at_ms, reverse=True)
        read += covered
    return runs, sorted({*index.listed, *read})


def _kept_dreams(realm: str, limit: int) -> list[DreamSummary]:
    """``_realm_dreams``, kept while the realm stands still; copies, since the caller samples them."""
    return [replace(run) for run in realm_memo(realm, ("dreams", limit), partial(_realm_dreams, realm, limit))]


def _realm_dreams(realm: str, limit: int) -> list[DreamSummary]:
    rows = (
        Audit.objects.using(realm_alias(realm))
        # MobKit orders by (applied_at_ms, audit_id), which no index covers. audit_id is assigned in
        # commit order under the write lock, so it is the same order unless the clock stepped back,
        # and it reads the newest rows through the primary key instead of sorting the whole table.
        .order_by("-audit_id")
        .values_list("op_kind", "memory_id", "detail", "applied_at_ms")[:DREAM_AUDIT_SCAN]
    )
    return _fold_runs(realm, rows, limit)


def _fold_runs(realm: str, rows: Iterable[tuple], limit: int) -> list[DreamSummary]:
    """Audit rows, newest first, folded into the steward runs they belong to (docs/store-format.md §5.4)."""
    runs: dict[str, DreamSummary] = {}
    for op_kind, memory_id, detail_text, applied_at_ms in rows:
        run_id = _steward_run_id(detail := parse_json_text(detail_text))
        if run_id is None:
            continue
        run = runs.get(run_id)
        if run is None:
            if len(runs) >= limit:
                continue  # rows of runs already seen still count; new runs are skipped
            run = runs[run_id] = DreamSummary(realm, run_id, applied_at_ms, applied_at_ms)
        _fold_audit_row(run, op_kind, memory_id, detail, applied_at_ms)
    for run in runs.values():
        run.op_kinds = dict(sorted(run.op_kinds.items()))
    return list(runs.values())


def _fold_audit_row(run: DreamSummary, op_kind: str, memory_id: str | None, detail: dict, applied_at_ms: int) -> None:
    run.ops += 1
    run.first_op_at_ms = min(run.first_op_at_ms, applied_at_ms)
    run.last_op_at_ms = max(run.last_op_at_ms, applied_at_ms)
    run.op_kinds[op_kind] = run.op_kinds.get(op_kind, 0) + 1
    if detail.get("quarantined") is not None:
        run.quarantined_ops += 1
    rationale = detail.get("rationale")
    run.touched.append((memory_id, rationale if isinstance(rationale, str) and rationale else None))


def _sampled(access: Access, realm: str, runs: list[DreamSummary]) -> list[DreamSummary]:
    """Each run's memory_ids and rationales, from the rows whose record the caller may read.

    docs/access.md §2.8: a run's samples are record ids and the steward's words about those
    records; a record the caller could not list (another identity's, a reviewer-only row) is
    left out of both. Counts (``ops``, ``op_kinds``) carry no content and stay whole.
    """
    hidden = unreadable_record_ids(
        access=access, realm=realm, ids=(memory_id for run in runs for memory_id, _ in run.touched if memory_id)
    )
    for run in runs:
        shown = [(memory_id, rationale) for memory_id, rationale in run.touched if memory_id not in hidden]
        run.memory_ids = [memory_id for memory_id, _ in shown if memory_id is not None][:DREAM_MEMORY_IDS]
        run.rationales = [rationale for _, rationale in shown if rationale is not None][:DREAM_RATIONALES]
    return runs


def _steward_run_id(detail: Any) -> str | None:
    if not isinstance(detail, dict):
        return None
    author = detail.get("author")
    if isinstance(author, dict) and author.get("author") == "steward" and isinstance(author.get("run_id"), str):
        return author["run_id"]
    return None


def running_dreams(
    *, access: Access, realm: str | None, now_ms: int | None = None
) -> tuple[list[DreamSummary], list[str]]:
    """Steward runs that have committed audit rows but have no run sheet yet, newest first.

    Decided from the store alone, so a run already going when a page loads shows as running
    (docs/timeline-live.md §2): MobKit writes a run's sheet after its last commit group
    (docs/store-format.md §7.3), so a run the recent audit rows name without a ``dream_runs`` row
    is still running, unless it has been quiet for ``RUNNING_QUIET_MS`` (it stopped without a sheet).
    """
    require_realm_history(access)
    quiet_since = (time.time_ns() // 1_000_000 if now_ms is None else now_ms) - RUNNING_QUIET_MS
    names, covered = None, []
    if realm is None:
        # docs/realm-index.md §10: a realm whose latest steward row is older than the quiet time
        # has no run going; the console-wide index knows that of every small realm unopened.
        every = realm_names()
        index = all_realms_index(every, on_failure=skip_unreadable_realm)
        newest = index.newest_dreams()
        names = [name for name in every if name not in index.listed or newest.get(name, -1) >= quiet_since]
        covered = list(index.listed)
    runs, realms = realm_rows(
        realm, lambda name: _sampled(access, name, _realm_running(name, quiet_since)), names=names
    )
    runs.sort(key=lambda run: run.first_op_at_ms, reverse=True)
    return runs, sorted({*covered, *realms})


def _realm_running(realm: str, quiet_since_ms: int) -> list[DreamSummary]:
    """The realm's runs without a sheet that were active since ``quiet_since_ms`` (copies: the caller
    samples them)."""
    unfinished = realm_memo(realm, "runs_without_sheet", partial(_runs_without_sheet, realm))
    return [replace(run) for run in unfinished if run.last_op_at_ms >= quiet_since_ms]


def _runs_without_sheet(realm: str) -> list[DreamSummary]:
    """The recent steward runs of the realm that have no ``dream_runs`` row (yet)."""
    if not store_format(realm).has("dream_runs"):
        return []  # the older format keeps no run sheets, so no run could be seen to finish
    audit = Audit.objects.using(realm_alias(realm)).order_by("-audit_id")
    index = realm_index(realm)
    if index is not None:
        # The index keeps the steward's own audit rows, so however many other writes came since,
        # the newest steward rows are a few primary-key reads away (docs/realm-index.md §8).
        audit = audit.filter(audit_id__in=index.newest_steward_audit_ids(RUNNING_STEWARD_ROWS))
    rows = audit.values_list("op_kind", "memory_id", "detail", "applied_at_ms")[:RUNNING_AUDIT_SCAN]
    recent = _fold_runs(realm, rows, RUNNING_MAX)
    if not recent:
        return []
    finished = set(
        DreamRun.objects.using(realm_alias(realm))
        .filter(run_id__in=[run.run_id for run in recent])
        .values_list("run_id", flat=True)
    )
    return [run for run in recent if run.run_id not in finished]


def record_dreams(*, access: Access, realm: str, memory_id: str) -> list[DreamSummary]:
    """Steward runs whose audit rows touched one record, for its biography."""
    require_realm_history(access)
    audit = Audit.objects.using(realm_alias(realm))
    index = realm_index(realm)
    # The audit table has no index on memory_id; the console's index keeps the steward's rows by record.
    audit = audit.filter(audit_id__in=index.steward_audit_ids(memory_id)) if index else audit.filter(memory_id=memory_id)
    rows = (
        audit.order_by("-applied_at_ms", "-audit_id")
        .values_list("op_kind", "memory_id", "detail", "applied_at_ms")[:DREAM_AUDIT_SCAN]
    )
    runs: dict[str, DreamSummary] = {}
    for op_kind, row_memory_id, detail_text, applied_at_ms in rows:
        run_id = _steward_run_id(detail := parse_json_text(detail_text))
        if run_id is not None:
            run = runs.setdefault(run_id, DreamSummary(realm, run_id, applied_at_ms, applied_at_ms))
            _fold_audit_row(run, op_kind, row_memory_id, detail, applied_at_ms)
    return _sampled(access, realm, list(runs.values()))


@dataclass(frozen=True)
class DreamRunRow:
    realm: str
    run_id: str
    partition: str
    started_at_ms: int
    completed_at_ms: int
    ops_committed: int
    detail: Any


def dream_runs(*, access: Access, realm: str | None, limit: int) -> tuple[list[DreamRunRow], list[str]]:
    """Durable verdict sheets; a realm in the older format has none (no dream_runs table)."""
    require_realm_history(access)

    def sheets(name: str) -> list[DreamRunRow]:
        return realm_memo(name, ("dream_runs", limit), partial(_newest_sheets, name, limit))

    out, realms = merged_realm_rows(
        realm, ("dream_runs", limit), sheets, order=lambda row: (row.completed_at_ms, row.run_id), reverse=True
    )
    return (out or [])[:limit], realms


def _newest_sheets(name: str, limit: int) -> list[DreamRunRow]:
    """The realm's ``limit`` newest run sheets (none in the older format: no dream_runs table)."""
    if not store_format(name).has("dream_runs"):
        return []
    rows = (
        DreamRun.objects.using(realm_alias(name))
        .order_by("-completed_at_ms", "-run_id")
        .values_list("run_id", "partition_label", "started_at_ms", "completed_at_ms", "ops_committed", "detail")[:limit]
    )
    return [
        DreamRunRow(name, run_id, partition, started, completed, ops, detail if parsed is None else parsed)
        for run_id, partition, started, completed, ops, detail in rows
        for parsed in (parse_json_text(detail),)
    ]


@dataclass(frozen=True)
class AuditVerdictRow:
    realm: str
    run_id: str
    record_id: str
    verdict: str
    rationale: str
    created_at_ms: int


def open_audit_verdicts(*, access: Access, realm: str | None, limit: int) -> tuple[list[AuditVerdictRow], list[str]]:
    require_realm_history(access)

    def verdicts(name: str) -> list[AuditVerdictRow]:
        if not store_format(name).has("dream_audit_verdicts"):
            return []
        rows = (
            DreamAuditVerdict.objects.using(realm_alias(name))
            .filter(resolved_at_ms__isnull=True)
            .order_by("-created_at_ms", "record_id")
            .values("run_id", "record_id", "verdict", "rationale", "created_at_ms")
        )

        def readable(batch: list[dict[str, Any]]) -> list[AuditVerdictRow]:
            # docs/access.md §2.8: a verdict names its record and says why; only for its readers.
            hidden = unreadable_record_ids(access=access, realm=name, ids=(row["record_id"] for row in batch))
            return [AuditVerdictRow(realm=name, **row) for row in batch if row["record_id"] not in hidden]

        return first_visible(rows.iterator(), keep=readable, limit=limit)

    out, realms = realm_rows(realm, verdicts)
    out.sort(key=lambda row: (-row.created_at_ms, row.record_id))
    return out[:limit], realms
