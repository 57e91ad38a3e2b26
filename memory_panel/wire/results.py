"""MobKit's panel result shapes, written out field by field for every RPC result.

Selectors return internal dataclasses; what goes on the wire is decided here alone, so renaming
a selector field cannot silently change MobKit's format (docs/wire-contract.md §1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_panel.store.records import MemoryRecord

if TYPE_CHECKING:
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
        # The newest MobKit console adds the hash quarantine/decide needs (spec §1.2 (b)).
        out["content_hash"] = record.content_hash
    if record.malformed:
        out["malformed_columns"] = list(record.malformed)
    return out


def search_result_json(result: SearchResult) -> dict[str, Any]:
    """A search match: the records list row plus ``snippet`` and ``score`` (docs/wire-contract.md, Search)."""
    return {**record_json(result.record, with_body=False), "snippet": result.snippet, "score": result.score}


def injection_json(row: InjectionRow, *, with_realm: bool) -> dict[str, Any]:
    """Per-record ledger rows omit a null session_key; panel/injections rows carry realm and null."""
    out: dict[str, Any] = {"realm": row.realm} if with_realm else {}
    out.update(record_id=row.record_id, identity=row.identity)
    if with_realm or row.session_key is not None:
        out["session_key"] = row.session_key
    out.update(surface=row.surface, at_ms=row.at_ms)
    return out


def author_debug(author: Any) -> str:
    """MobKit renders a proposal's author with Rust's Debug format, e.g. ``Agent { identity: "x" }``."""
    if not isinstance(author, dict) or not isinstance(author.get("author"), str):
        return "Unknown"
    variant = author["author"].capitalize()
    fields = [f"{k}: {_debug_str(v)}" for k, v in author.items() if k != "author"]
    return f"{variant} {{ {', '.join(fields)} }}" if fields else variant


def _debug_str(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def pending_promotion_json(row: PendingPromotionRow) -> dict[str, Any]:
    return {
        "realm": row.realm,
        "pending_id": row.pending_id,
        "record_id": row.record_id,
        "scope_kind": row.scope_kind,
        "scope_key": row.scope_key,
        "rationale": row.rationale,
        "status": row.status,
        "created_at_ms": row.created_at_ms,
    }


def scope_holdings_json(row: ScopeHoldings) -> dict[str, Any]:
    return {
        "realm": row.realm,
        "scope_kind": row.scope_kind,
        "scope_key": row.scope_key,
        "active": row.active,
        "quarantined": row.quarantined,
        "superseded": row.superseded,
        "tombstoned": row.tombstoned,
        "body_bytes": row.body_bytes,
        "floor_pressure": row.floor_pressure,
    }


def dream_summary_json(run: DreamSummary) -> dict[str, Any]:
    return {
        "realm": run.realm,
        "run_id": run.run_id,
        "first_op_at_ms": run.first_op_at_ms,
        "last_op_at_ms": run.last_op_at_ms,
        "ops": run.ops,
        "op_kinds": dict(run.op_kinds),
        "quarantined_ops": run.quarantined_ops,
        "memory_ids": list(run.memory_ids),
        "rationales": list(run.rationales),
    }


def proposal_json(row: ProposalRow) -> dict[str, Any]:
    return {
        "realm": row.realm,
        "proposal_id": row.proposal_id,
        "scope_kind": row.scope_kind,
        "scope_key": row.scope_key,
        "title": row.title,
        "kind": row.kind,
        "author": row.author,
        "status": row.status,
        "created_at_ms": row.created_at_ms,
        "tainted": row.tainted,
    }


def harvest_json(row: HarvestRow) -> dict[str, Any]:
    return {
        "realm": row.realm,
        "identity": row.identity,
        "session_key": row.session_key,
        "cause": row.cause,
        "retired_at_ms": row.retired_at_ms,
    }


def dream_run_json(row: DreamRunRow) -> dict[str, Any]:
    return {
        "realm": row.realm,
        "run_id": row.run_id,
        "partition": row.partition,
        "started_at_ms": row.started_at_ms,
        "completed_at_ms": row.completed_at_ms,
        "ops_committed": row.ops_committed,
        "detail": row.detail,
    }


def audit_verdict_json(row: AuditVerdictRow) -> dict[str, Any]:
    return {
        "realm": row.realm,
        "run_id": row.run_id,
        "record_id": row.record_id,
        "verdict": row.verdict,
        "rationale": row.rationale,
        "created_at_ms": row.created_at_ms,
    }
