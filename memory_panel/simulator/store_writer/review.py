"""Quarantine review: an operator's or the steward's verdict on a quarantined record.

Current format only (docs/store-format.md §7.4–§7.5). A release writes the successor
``<origin>-released`` (a supersede of the prior when the origin was a quarantined update) and
tombstones the origin; a tombstone verdict tombstones the origin. The ReviewAudit rides on every
audit row of the batch, and a repeated verdict is recognised from it as a replay.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NamedTuple

from memory_panel.simulator.store_writer.core import StoreCore
from memory_panel.simulator.store_writer.encoding import content_hash, mint_token
from memory_panel.simulator.store_writer.errors import ReviewRefused, StoreWriteError
from memory_panel.simulator.store_writer.limits import (
    GATED_PROMOTION_EXPIRY_MS,
    QUARANTINE_DECISIONS,
    REVIEW_RATIONALE_MAX_BYTES,
)
from memory_panel.simulator.store_writer.ops import (
    OPERATOR,
    batch,
    create_op,
    new_record,
    scope_columns,
    scope_from_columns,
    steward,
    supersede_op,
    tombstone_op,
)
from memory_panel.simulator.store_writer.validation import check_batch_shape, secret_class


@dataclass(frozen=True)
class ReviewResult:
    """Outcome of a current-format quarantine review (§7.4): released, tombstoned or a replay."""

    outcome: str
    origin: str
    successor: str | None
    audit_token: str | None
    review: dict[str, Any] | None


class _Origin(NamedTuple):
    scope_kind: str
    scope_key: str
    kind: str
    title: str
    description: str
    body: str
    tags: str
    provenance: str
    status_kind: str
    status_detail: str | None
    supersedes: str | None


# (pending_id, stage_token) of a live gated promotion of the origin.
_Gate = tuple[str, str]


def _review_author(reviewer: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The batch author and the rationale prefix (``operator `` for operators, §7.3)."""
    if reviewer.get("kind") == "operator":
        return OPERATOR, "operator "
    if reviewer.get("kind") == "steward":
        return steward(reviewer["run_id"]), ""
    raise StoreWriteError(f"unknown reviewer kind '{reviewer.get('kind')}'")


class QuarantineReview(StoreCore):
    def review_quarantine(self, origin_id: str, decision: str, *, reviewer: dict[str, Any],
                          expected_content_hash: str | None = None, rationale: str | None = None,
                          scope: dict[str, Any] | None = None) -> ReviewResult:
        """Release (successor ``<origin>-released``, then tombstone the origin) or tombstone.

        ``expected_content_hash`` defaults to the origin's own hash (a reviewer who read it).
        """
        self._require_current("quarantine review")
        if decision not in QUARANTINE_DECISIONS:
            raise StoreWriteError(f"unknown quarantine decision '{decision}'")
        author, prefix = _review_author(reviewer)
        if rationale is not None and len(rationale.encode("utf-8")) > REVIEW_RATIONALE_MAX_BYTES:
            raise StoreWriteError(f"review rationale must be at most {REVIEW_RATIONALE_MAX_BYTES} bytes")
        origin = self._review_origin(origin_id, scope)
        digest = content_hash(origin.title, origin.body)
        expected = digest if expected_content_hash is None else expected_content_hash
        if expected != digest:
            raise ReviewRefused("content_mismatch", "the record changed since it was read")
        if origin.status_kind == "tombstoned":
            return self._review_replay(origin_id, decision)
        if origin.status_kind != "quarantined":
            raise ReviewRefused("not_quarantined", f"record '{origin_id}' is {origin.status_kind}")
        expired, invalidated = self._review_gates(origin_id, decision, reviewer)
        suffix = f": {rationale}" if rationale else ""
        review: dict[str, Any] = {"verdict": decision, "reviewer": reviewer, "origin": origin_id}
        successor = None
        if decision == "release":
            successor = f"{origin_id}-released"
            ops = self._release_ops(origin_id, origin, successor, f"{prefix}quarantine release{suffix}")
            ops.append(tombstone_op(origin_id, rationale=f"{prefix}superseded by quarantine release"))
            review["successor"] = successor
        else:
            ops = [tombstone_op(origin_id, rationale=f"{prefix}quarantine tombstone{suffix}")]
        review["expected_content_hash"] = expected
        review["origin_quarantine_reason"] = origin.status_detail or ""
        if expired:
            review["expired_promotions"] = [p for p, _ in expired]
        if invalidated:
            review["invalidated_promotions"] = [p for p, _ in invalidated]
        if rationale:
            review["rationale"] = rationale
        token = self._apply_review(batch(realm=self.realm, author=author, kind="review_verdict", ops=ops),
                                   review, expired, invalidated)
        return ReviewResult("released" if successor else "tombstoned", origin_id, successor, token, review)

    def _review_origin(self, origin_id: str, scope: dict[str, Any] | None) -> _Origin:
        row = self.conn.execute(
            "SELECT scope_kind, scope_key, kind, title, description, body, tags, provenance, status_kind,"
            " status_detail, supersedes FROM records WHERE memory_id=?", (origin_id,)).fetchone()
        if row is None or (scope is not None and scope_columns(scope) != (row[0], row[1])):
            raise ReviewRefused("not_found", f"record '{origin_id}' is not in the authorized scope")
        return _Origin(*row)

    def _review_gates(self, origin_id: str, decision: str,
                      reviewer: dict[str, Any]) -> tuple[list[_Gate], list[_Gate]]:
        """Live gated promotions of the origin: (to expire, to invalidate); any other one blocks."""
        now = self.clock()
        expired, invalidated = [], []
        for pending_id, created, token in self.conn.execute(
                "SELECT pending_id, created_at_ms, stage_token FROM pending_promotions"
                " WHERE record_id=? AND status='pending'", (origin_id,)).fetchall():
            if now - created > GATED_PROMOTION_EXPIRY_MS:
                expired.append((pending_id, token))
            elif decision == "tombstone" and reviewer["kind"] == "operator":
                invalidated.append((pending_id, token))
            else:
                raise ReviewRefused("gate_pending", "a gated promotion of this record is pending",
                                    pending_id=pending_id, expires_at_ms=created + GATED_PROMOTION_EXPIRY_MS)
        return expired, invalidated

    def _release_ops(self, origin_id: str, origin: _Origin, successor: str,
                     rationale: str) -> list[dict[str, Any]]:
        """The successor's create, or its supersede of the prior for a quarantined update (§4.3)."""
        tags = json.loads(origin.tags)
        hit = secret_class(origin.title, origin.description, origin.body, *tags)
        if hit:
            raise ReviewRefused("secret_detected", f"matches the '{hit}' secret pattern class", **{"class": hit})
        if self.conn.execute("SELECT 1 FROM records WHERE memory_id=?", (successor,)).fetchone():
            raise ReviewRefused("successor_conflict", f"'{successor}' already exists")
        record = new_record(kind=origin.kind, title=origin.title, description=origin.description,
                            body=origin.body, tags=tags,
                            verification=json.loads(origin.provenance).get("verification"))
        if not origin.supersedes:
            return [create_op(scope_from_columns(self.realm, origin.scope_kind, origin.scope_key), record,
                              derived_from=[origin_id], id=successor, rationale=rationale)]
        prior = self.conn.execute("SELECT status_kind FROM records WHERE memory_id=?",
                                  (origin.supersedes,)).fetchone()
        if prior is None or prior[0] != "active":
            raise ReviewRefused("stale_update", "the prior is no longer active",
                                prior_status=prior[0] if prior else "missing")
        return [supersede_op(origin.supersedes, record, derived_from=[origin_id], id=successor,
                             rationale=rationale)]

    def _apply_review(self, staged: dict[str, Any], review: dict[str, Any],
                      expired: list[_Gate], invalidated: list[_Gate]) -> str:
        """Resolve the gates and apply the verdict in one transaction; returns the ``review-…`` token."""
        token = mint_token("review")
        staged = {**staged, "_review": review}
        check_batch_shape(staged, realm=self.realm, direct=True)

        def run(now: int) -> None:
            for (pending_id, stage_token), status in ([(e, "expired") for e in expired]
                                                      + [(i, "denied") for i in invalidated]):
                self.conn.execute("UPDATE pending_promotions SET status=?, resolved_at_ms=? WHERE pending_id=?",
                                  (status, now, pending_id))
                self.conn.execute("DELETE FROM stage WHERE token=?", (stage_token,))
            self._apply_ops(staged, None, token, now, direct=True)

        self._transaction(run)
        return token

    def _review_replay(self, origin_id: str, decision: str) -> ReviewResult:
        """A tombstoned origin is a replay only if its own review audit row says so (§7.5)."""
        for token, detail in self.conn.execute(
                "SELECT stage_token, detail FROM audit WHERE memory_id=? AND op_kind='tombstone'"
                " ORDER BY audit_id DESC", (origin_id,)):
            review = json.loads(detail).get("review")
            if not review or review.get("origin") != origin_id or review.get("verdict") != decision:
                continue
            if decision == "release":
                first = self.conn.execute("SELECT memory_id FROM audit WHERE stage_token=? AND op_index=0",
                                          (token,)).fetchone()
                if first is None or first[0] != review.get("successor"):
                    continue
                return ReviewResult("already_released", origin_id, review["successor"], token, review)
            return ReviewResult("already_tombstoned", origin_id, None, token, review)
        raise ReviewRefused("not_quarantined", f"record '{origin_id}' is tombstoned")
