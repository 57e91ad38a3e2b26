"""Proposals and gated promotions: how memory reaches a mob scope (docs/store-format.md §7.2–§7.3).

An agent proposes; the steward accepts a clean proposal directly, and stages (never commits) a
promotion of a tainted proposal or a quarantined record behind an operator's gate.
"""

from __future__ import annotations

import json
from typing import Any

from memory_panel.simulator.store_writer.core import Receipt, StoreCore
from memory_panel.simulator.store_writer.encoding import mint_token, to_json
from memory_panel.simulator.store_writer.errors import StoreWriteError
from memory_panel.simulator.store_writer.limits import PROMOTION_RESOLUTIONS, PROPOSAL_STATUSES
from memory_panel.simulator.store_writer.ops import (
    batch,
    create_op,
    new_record,
    scope_columns,
    scope_from_columns,
    steward,
    tombstone_op,
)
from memory_panel.simulator.store_writer.validation import validate_record


class ProposalWrites(StoreCore):
    def propose(self, scope: dict[str, Any], record: dict[str, Any], *, author: dict[str, Any],
                taint: str | None = None, proposal_id: str | None = None) -> str:
        """A pending proposal; the record is stored as given (validated, not normalized)."""
        validate_record(record)
        scope_kind, scope_key = scope_columns(scope)
        if scope.get("realm") != self.realm:
            raise StoreWriteError(f"scope realm '{scope.get('realm')}' does not match '{self.realm}'")
        proposal_id = proposal_id or mint_token("prop")
        self._transaction(lambda now: self.conn.execute(
            "INSERT INTO proposals(proposal_id, scope_kind, scope_key, record, author, status,"
            " created_at_ms, taint) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
            (proposal_id, scope_kind, scope_key, to_json(record), to_json(author), now, taint)))
        return proposal_id

    def set_proposal_status(self, proposal_id: str, status: str) -> None:
        if status not in PROPOSAL_STATUSES:
            raise StoreWriteError(f"unknown proposal status '{status}'")

        def run(now: int) -> None:
            if self.conn.execute("UPDATE proposals SET status=? WHERE proposal_id=?",
                                 (status, proposal_id)).rowcount == 0:
                raise StoreWriteError(f"unknown proposal '{proposal_id}'")

        self._transaction(run)

    def accept_proposal(self, proposal_id: str, *, run_id: str, rationale: str) -> Receipt:
        """The steward's direct accept: create in the proposal's scope, mark it accepted (§7.3)."""
        row = self.conn.execute("SELECT scope_kind, scope_key, record FROM proposals WHERE proposal_id=?",
                                (proposal_id,)).fetchone()
        if row is None:
            raise StoreWriteError(f"unknown proposal '{proposal_id}'")
        op = create_op(scope_from_columns(self.realm, row[0], row[1]), json.loads(row[2]),
                       rationale=f"proposal accepted: {rationale}")
        receipt = self.apply_batch(batch(realm=self.realm, author=steward(run_id), kind="review_verdict",
                                         ops=[op]))
        self.set_proposal_status(proposal_id, "accepted")
        return receipt

    def stage_gated_promotion(self, source_id: str, mob: dict[str, Any], *, run_id: str, rationale: str,
                              pending_id: str | None = None) -> str:
        """Stage (not commit) a promotion to mob scope and record its pending gate (§7.3).

        ``source_id`` is a quarantined record (its copy is created and the source tombstoned) or a
        ``prop-…`` proposal (its record is created). One pending gate per source.
        """
        if mob.get("scope") != "mob":
            raise StoreWriteError("a gated promotion targets a mob scope")
        if self.conn.execute("SELECT 1 FROM pending_promotions WHERE record_id=? AND status='pending'",
                             (source_id,)).fetchone():
            raise StoreWriteError(f"'{source_id}' already has a pending promotion gate")
        token = self.stage(batch(realm=self.realm, author=steward(run_id), kind="review_verdict",
                                 ops=self._promotion_ops(source_id, mob, rationale)))
        pending_id = pending_id or self._next_pending_id()
        scope_kind, scope_key = scope_columns(mob)
        self._transaction(lambda now: self.conn.execute(
            "INSERT INTO pending_promotions(pending_id, stage_token, record_id, scope_kind, scope_key,"
            " rationale, status, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
            (pending_id, token, source_id, scope_kind, scope_key, rationale, now)))
        return pending_id

    def _promotion_ops(self, source_id: str, mob: dict[str, Any], rationale: str) -> list[dict[str, Any]]:
        proposal = self.conn.execute("SELECT record FROM proposals WHERE proposal_id=?", (source_id,)).fetchone()
        if proposal is not None:
            return [create_op(mob, json.loads(proposal[0]), rationale=f"gated quarantine promotion: {rationale}")]
        row = self._row(source_id, "kind, title, description, body, tags, provenance")
        verification = json.loads(row[5]).get("verification")
        record = new_record(kind=row[0], title=row[1], description=row[2], body=row[3],
                            tags=json.loads(row[4]), verification=verification)
        return [create_op(mob, record, derived_from=[source_id], rationale=f"gated quarantine promotion: {rationale}"),
                tombstone_op(source_id, rationale="promoted to mob scope (gated)")]

    def _next_pending_id(self) -> str:
        # The gating engine numbers actions, audits and pendings from one counter
        # (docs/runtime-surfaces.md §7: "gate-action-NNNNNN"); a pending uses the same shape.
        count = self.conn.execute("SELECT COUNT(*) FROM pending_promotions").fetchone()[0]
        return f"gate-pending-{count + 1:06d}"

    def resolve_promotion(self, pending_id: str, resolution: str) -> Receipt | None:
        """committed → commit the staged batch; denied/expired → discard it (§7.3)."""
        if resolution not in PROMOTION_RESOLUTIONS:
            raise StoreWriteError(f"unknown promotion resolution '{resolution}'")
        row = self.conn.execute("SELECT stage_token, record_id, status FROM pending_promotions"
                                " WHERE pending_id=?", (pending_id,)).fetchone()
        if row is None:
            raise StoreWriteError(f"unknown pending promotion '{pending_id}'")
        if row[2] != "pending":
            raise StoreWriteError(f"pending promotion '{pending_id}' is already {row[2]}")
        token, source_id = row[0], row[1]
        receipt = self.commit(token) if resolution == "committed" else None

        def run(now: int) -> None:
            if receipt is None:
                self.conn.execute("DELETE FROM stage WHERE token=?", (token,))
            self.conn.execute("UPDATE pending_promotions SET status=?, resolved_at_ms=? WHERE pending_id=?",
                              (resolution, now, pending_id))
            if resolution != "expired":
                self.conn.execute("UPDATE proposals SET status=? WHERE proposal_id=?",
                                  ("accepted" if receipt else "rejected", source_id))

        self._transaction(run)
        return receipt
