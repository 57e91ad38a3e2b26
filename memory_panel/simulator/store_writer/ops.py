"""MobKit's JSON shapes as plain dicts: scopes, authors, records, staged ops and batches.

Key order is the Rust declaration order (docs/store-format.md §2), because the dicts are stored as
JSON exactly as built (``stage.batch``, ``proposals.record``, ``records.provenance``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_panel.simulator.store_writer.errors import StoreWriteError
from memory_panel.store.records import SCOPE_KINDS

OPERATOR: dict[str, Any] = {"author": "operator"}
APPLICATION: dict[str, Any] = {"author": "application"}


def identity_scope(realm: str, identity: str) -> dict[str, Any]:
    return {"scope": "identity", "realm": realm, "identity": identity}


def mob_scope(realm: str, mob: str) -> dict[str, Any]:
    return {"scope": "mob", "realm": realm, "mob": mob}


def operator_scope(realm: str, operator: str) -> dict[str, Any]:
    return {"scope": "operator", "realm": realm, "operator": operator}


def realm_scope(realm: str) -> dict[str, Any]:
    return {"scope": "realm", "realm": realm}


def scope_columns(scope: dict[str, Any]) -> tuple[str, str]:
    """(scope_kind, scope_key) as stored; a realm scope has key ''."""
    kind = scope.get("scope")
    if kind not in SCOPE_KINDS:
        raise StoreWriteError(f"unknown scope kind '{kind}'")
    return kind, "" if kind == "realm" else str(scope[kind])


def scope_from_columns(realm: str, kind: str, key: str) -> dict[str, Any]:
    if kind == "realm":
        return realm_scope(realm)
    return {"scope": kind, "realm": realm, kind: key}


def agent(identity: str) -> dict[str, Any]:
    return {"author": "agent", "identity": identity}


def steward(run_id: str) -> dict[str, Any]:
    return {"author": "steward", "run_id": run_id}


def distiller(run_id: str) -> dict[str, Any]:
    return {"author": "distiller", "run_id": run_id}


def evidence_ref(session_id: str, generation: int, revision: str | None = None,
                 range_: tuple[int, int] | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"session_id": session_id, "generation": generation}
    if revision is not None:
        ref["revision"] = revision
    if range_ is not None:
        ref["range"] = list(range_)
    return ref


def verification_claim(checked: str, evidence: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    return {"checked": checked, "evidence": list(evidence)}


def new_record(*, kind: str, title: str, body: str, description: str = "",
               tags: Sequence[str] = (), evidence: Sequence[dict[str, Any]] = (),
               verification: dict[str, Any] | None = None) -> dict[str, Any]:
    """A NewMemoryRecord, stored as given (no normalization: that is remember's job)."""
    record: dict[str, Any] = {"kind": kind, "title": title, "description": description, "body": body,
                              "tags": list(tags), "evidence": list(evidence)}
    if verification is not None:
        record["verification"] = verification
    return record


def _optional(op: dict[str, Any], **fields: Any) -> dict[str, Any]:
    op.update({k: v for k, v in fields.items() if v is not None})
    return op


def create_op(scope: dict[str, Any], record: dict[str, Any], *, trust: str = "agent_observed",
              derived_from: Sequence[str] = (), id: str | None = None, rationale: str | None = None,
              created_at_ms: int | None = None, updated_at_ms: int | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"op": "create"}
    _optional(op, id=id)
    op.update(scope=scope, record=record, trust=trust, derived_from=list(derived_from))
    return _optional(op, rationale=rationale, created_at_ms=created_at_ms, updated_at_ms=updated_at_ms)


def supersede_op(prior: str, record: dict[str, Any], *, trust: str = "agent_observed",
                 derived_from: Sequence[str] = (), id: str | None = None,
                 rationale: str | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"op": "supersede"}
    _optional(op, id=id)
    op.update(prior=prior, record=record, trust=trust, derived_from=list(derived_from))
    return _optional(op, rationale=rationale)


def tombstone_op(memory_id: str, *, rationale: str | None = None) -> dict[str, Any]:
    return _optional({"op": "tombstone", "id": memory_id}, rationale=rationale)


def retier_op(memory_id: str, trust: str, *, rationale: str | None = None) -> dict[str, Any]:
    return _optional({"op": "retier", "id": memory_id, "trust": trust}, rationale=rationale)


def set_rank_op(memory_id: str, rank: int | None) -> dict[str, Any]:
    return {"op": "set_rank", "id": memory_id, "rank": rank}


def batch(*, realm: str, author: dict[str, Any], ops: Sequence[dict[str, Any]],
          kind: str = "fresh_write") -> dict[str, Any]:
    """A StagedMutationBatch."""
    return {"realm": realm, "author": author, "kind": kind, "ops": list(ops)}
