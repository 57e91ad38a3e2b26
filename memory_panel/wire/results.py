"""MobKit's panel result shapes, written out field by field for every RPC result.

Selectors return internal dataclasses; what goes on the wire is decided here alone, so renaming
a selector field cannot silently change MobKit's format (docs/wire-contract.md §1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_panel.store.records import MemoryRecord

if TYPE_CHECKING:
    from memory_panel.selectors.as_of import ChangeRow
    from memory_panel.selectors.diff import VersionDiff
    from memory_panel.selectors.dreams import AuditVerdictRow, DreamRunRow, DreamSummary
    from memory_panel.selectors.holdings import ScopeHoldings
    from memory_panel.selectors.injections import InjectionRow
    from memory_panel.selectors.pending import HarvestRow, ProposalRow
    from memory_panel.selectors.quarantine import PendingPromotionRow
    from memory_panel.selectors.search import SearchResult


def status_json(record: MemoryRecord) -> dict[str, str]:
    if record.status == "superseded":
        return {"status": "superseded", "by": record.status_detail or ""}
    if record.status == "quarantined":
        return {"status": "quarantined", "reason": record.status_detail or ""}
    return {"status": record.status}


def record_json(record: MemoryRecord, *, with_body: bool) -> dict[str, Any]:
    """serde of MemoryRecord, field for field; list rows swap ``body`` for ``body_bytes``."""
    out: dict[str, Any] = {
        "id": record.id,
        "scope": record.scope,
        "kind": record.kind,
        "title": record.title,
        "description": record.description,
    }
    if with_body:
        out["body"] = record.body
    else:
        out["body_bytes"] = record.body_bytes
    out["tags"] = record.tags
    out["provenance"] = record.provenance
    out["trust"] = record.trust
    out["status"] = status_json(record)
    if record.supersedes is not None:
        out["supersedes"] = record.supersedes
    out["derived_from"] = record.derived_from
    if record.working_set_rank is not None:
        out["working_set_rank"] = record.working_set_rank
    out["created_at_ms"] = record.created_at_ms
    out["updated_at_ms"] = record.updated_at_ms
    out["usage"] = record.usage
    out["ever_quarantined"] = record.ever_quarantined
    if with_body:
        # The newest MobKit console adds the hash quarantine/decide needs (docs/wire-contract.md §1.2 (b)).
        out["content_hash"] = record.content_hash
    if record.malformed:
        out["malformed_columns"] = list(record.malformed)
    return out


def search_result_json(result: SearchResult) -> dict[str, Any]:
    """A search match: the records list row plus ``snippet`` and ``score`` (docs/wire-contract.md §C.4)."""
    return {**record_json(result.record, with_body=False), "snippet": result.snippet, "score": result.score}


def injection_json(row: InjectionRow, *, with_realm: bool) -> dict[str, Any]:
    """Per-record ledger rows omit a null session_key; panel/injections rows carry realm and null."""
    out: dict[str, Any] = {"realm": row.realm} if with_realm else {}
    out.update(record_id=row.record_id, identity=row.identity)
    if with_realm or row.session_key is not None:
        out["session_key"] = row.session_key
    out.update(surface=row.surface, at_ms=row.at_ms)
    return out


def _fields(row: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The named attributes in wire order; a renamed selector field fails here, loudly."""
    return {name: getattr(row, name) for name in names}


PENDING_PROMOTION_FIELDS = (
    "realm", "pending_id", "record_id", "scope_kind", "scope_key", "rationale", "status", "created_at_ms",
)
SCOPE_HOLDINGS_FIELDS = (
    "realm", "scope_kind", "scope_key", "active", "quarantined", "superseded", "tombstoned", "body_bytes",
    "floor_pressure",
)
DREAM_SUMMARY_FIELDS = (
    "realm", "run_id", "first_op_at_ms", "last_op_at_ms", "ops", "op_kinds", "quarantined_ops", "memory_ids",
    "rationales",
)
PROPOSAL_FIELDS = (
    "realm", "proposal_id", "scope_kind", "scope_key", "title", "kind", "author", "status", "created_at_ms",
    "tainted",
)
HARVEST_FIELDS = ("realm", "identity", "session_key", "cause", "retired_at_ms")
DREAM_RUN_FIELDS = ("realm", "run_id", "partition", "started_at_ms", "completed_at_ms", "ops_committed", "detail")
AUDIT_VERDICT_FIELDS = ("realm", "run_id", "record_id", "verdict", "rationale", "created_at_ms")


def pending_promotion_json(row: PendingPromotionRow) -> dict[str, Any]:
    return _fields(row, PENDING_PROMOTION_FIELDS)


def scope_holdings_json(row: ScopeHoldings) -> dict[str, Any]:
    return _fields(row, SCOPE_HOLDINGS_FIELDS)


def dream_summary_json(run: DreamSummary) -> dict[str, Any]:
    out = _fields(run, DREAM_SUMMARY_FIELDS)
    # A copy: the summary is built incrementally and must not share its lists with a response.
    out.update(op_kinds=dict(run.op_kinds), memory_ids=list(run.memory_ids), rationales=list(run.rationales))
    return out


def proposal_json(row: ProposalRow) -> dict[str, Any]:
    return _fields(row, PROPOSAL_FIELDS)


def harvest_json(row: HarvestRow) -> dict[str, Any]:
    return _fields(row, HARVEST_FIELDS)


def dream_run_json(row: DreamRunRow) -> dict[str, Any]:
    return _fields(row, DREAM_RUN_FIELDS)


def audit_verdict_json(row: AuditVerdictRow) -> dict[str, Any]:
    return _fields(row, AUDIT_VERDICT_FIELDS)


def change_json(row: ChangeRow, diff: VersionDiff | None) -> dict[str, Any]:
    """One change between two moments (docs/history.md §5): what happened to which record, when;
    a superseded record's word diff to its successor, field by field, when the caller may read both."""
    out: dict[str, Any] = {
        "at_ms": row.change.at_ms,
        "change": row.change.kind,
        "record": {"id": row.record.id, "scope": row.record.scope, "kind": row.record.kind, "title": row.record.title},
        "status": status_json(row.record),
    }
    if row.change.other_id is not None:
        out["other_id"] = row.change.other_id
    if row.change.kind == "superseded":
        out["diff"] = None if diff is None else {
            field.field: [list(segment) for segment in field.segments] for field in diff.fields if field.changed
        }
    return out
