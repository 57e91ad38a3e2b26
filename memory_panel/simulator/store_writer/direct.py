"""The direct-write surfaces: remember, supersede, forget, retier, set_rank (docs/store-format.md §4.2).

They wrap one-op batches in MobKit's write guards: normalization, the exact-duplicate
short-circuit, and ``forget``'s quiet no-op on a record that is gone or elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memory_panel.simulator.store_writer.core import Receipt, StoreCore
from memory_panel.simulator.store_writer.encoding import collapse_whitespace, content_hash, normalize_tags
from memory_panel.simulator.store_writer.errors import StoreWriteError
from memory_panel.simulator.store_writer.ops import (
    APPLICATION,
    batch,
    create_op,
    new_record,
    retier_op,
    scope_columns,
    set_rank_op,
    supersede_op,
    tombstone_op,
)
from memory_panel.simulator.store_writer.validation import validate_record


class DirectWrites(StoreCore):
    def remember(self, scope: dict[str, Any], title: str, body: str, *, kind: str = "fact",
                 tags: Sequence[str] = (), author: dict[str, Any] = APPLICATION,
                 trust: str = "agent_observed", description: str = "",
                 evidence: Sequence[dict[str, Any]] = (), verification: dict[str, Any] | None = None,
                 derived_from: Sequence[str] = (), gate_reason: str | None = None,
                 rationale: str | None = None, id: str | None = None,
                 created_at_ms: int | None = None, updated_at_ms: int | None = None) -> str:
        """Normalize, short-circuit an exact duplicate, else create; returns the memory id."""
        title, body = collapse_whitespace(title), body.strip()
        description = collapse_whitespace(description)
        record = new_record(kind=kind, title=title, body=body, description=description,
                            tags=normalize_tags(tags), evidence=evidence, verification=verification)
        validate_record(record)
        scope_kind, scope_key = scope_columns(scope)
        # §4.2 exact-duplicate short-circuit: the oldest active twin in the scope wins.
        twin = self.conn.execute(
            "SELECT memory_id FROM records WHERE scope_kind=? AND scope_key=? AND content_hash=?"
            " AND status_kind='active' ORDER BY created_at_ms ASC LIMIT 1",
            (scope_kind, scope_key, content_hash(title, body))).fetchone()
        if twin is not None:
            return twin[0]
        op = create_op(scope, record, trust=trust, derived_from=derived_from, id=id, rationale=rationale,
                       created_at_ms=created_at_ms, updated_at_ms=updated_at_ms)
        return self.apply_batch(batch(realm=self.realm, author=author, ops=[op]),
                                gate_reason=gate_reason).memory_ids[0]

    def supersede(self, prior_id: str, title: str, body: str, *, kind: str | None = None,
                  tags: Sequence[str] | None = None, author: dict[str, Any] = APPLICATION,
                  trust: str = "agent_observed", description: str = "",
                  evidence: Sequence[dict[str, Any]] = (), verification: dict[str, Any] | None = None,
                  derived_from: Sequence[str] = (), gate_reason: str | None = None,
                  rationale: str | None = None, scope: dict[str, Any] | None = None) -> str:
        """Replace ``prior_id`` (kind and tags default to the prior's); returns the new id."""
        prior = self.conn.execute("SELECT scope_kind, scope_key, kind, tags FROM records WHERE memory_id=?",
                                  (prior_id,)).fetchone()
        if prior is None:
            raise StoreWriteError(f"record '{prior_id}' does not exist")
        if scope is not None and scope_columns(scope) != (prior[0], prior[1]):
            raise StoreWriteError(f"record '{prior_id}' does not belong to the requested scope")
        record = new_record(kind=kind or prior[2], title=collapse_whitespace(title), body=body.strip(),
                            description=collapse_whitespace(description),
                            tags=normalize_tags(json.loads(prior[3]) if tags is None else tags),
                            evidence=evidence, verification=verification)
        op = supersede_op(prior_id, record, trust=trust, derived_from=derived_from, rationale=rationale)
        return self.apply_batch(batch(realm=self.realm, author=author, ops=[op]),
                                gate_reason=gate_reason).memory_ids[0]

    def forget(self, memory_id: str, *, scope: dict[str, Any] | None = None,
               author: dict[str, Any] = APPLICATION, rationale: str | None = None) -> bool:
        """Tombstone; False (and nothing written) for a missing, foreign-scope or tombstoned record."""
        row = self.conn.execute("SELECT scope_kind, scope_key, status_kind FROM records WHERE memory_id=?",
                                (memory_id,)).fetchone()
        if row is None or row[2] == "tombstoned":
            return False
        if scope is not None and scope_columns(scope) != (row[0], row[1]):
            return False
        self.apply_batch(batch(realm=self.realm, author=author,
                               ops=[tombstone_op(memory_id, rationale=rationale)]))
        return True

    tombstone = forget

    def retier(self, memory_id: str, trust: str, *, author: dict[str, Any] = APPLICATION,
               rationale: str | None = None) -> Receipt:
        return self.apply_batch(batch(realm=self.realm, author=author,
                                      ops=[retier_op(memory_id, trust, rationale=rationale)]))

    def set_rank(self, memory_id: str, rank: int | None, *, author: dict[str, Any] = APPLICATION) -> Receipt:
        return self.apply_batch(batch(realm=self.realm, author=author, ops=[set_rank_op(memory_id, rank)]))
