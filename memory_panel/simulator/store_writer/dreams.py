"""The steward's side of the store: dream runs, their commit groups and run sheets, harvests.

docs/store-format.md §7.3: a dream writes batches authored ``steward{run_id}``, then its run sheet
(``dream_runs``) and the non-clean usage verdicts (``dream_audit_verdicts``), current format only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_panel.simulator.store_writer.core import Receipt, StoreCore
from memory_panel.simulator.store_writer.encoding import to_json
from memory_panel.simulator.store_writer.errors import StoreWriteError
from memory_panel.simulator.store_writer.limits import HARVEST_STATUSES
from memory_panel.simulator.store_writer.ops import batch, steward

DREAM_VERDICT_KEYS = (
    "proposals_accepted", "proposals_rejected", "proposals_held", "proposals_gated",
    "quarantine_released", "quarantine_tombstoned", "quarantine_held", "quarantine_gated",
    "quarantine_release_blocked", "usage_load_bearing", "usage_dead_weight", "contradictions_emitted",
    "open_loops_escalated", "harvests_completed",
)


class DreamWrites(StoreCore):
    def new_dream_run_id(self) -> str:
        # §4.4: dream-{now_ms}-{seq}, seq decimal and counted per steward engine (here: per writer).
        return f"dream-{self.clock()}-{next(self._dream_seq)}"

    def steward_batch(self, run_id: str, ops: Sequence[dict[str, Any]], *,
                      kind: str = "fresh_write") -> Receipt:
        """One dream commit group (consolidate, proposal:…, quarantine:…, harvest:…, rank)."""
        return self.apply_batch(batch(realm=self.realm, author=steward(run_id), kind=kind, ops=ops))

    def record_dream_run(self, run_id: str, *, started_at_ms: int, ops_committed: int,
                         phases: Sequence[tuple[str, str]] = (), verdicts: dict[str, int] | None = None,
                         skips: Sequence[str] = (), partition: str = "realm",
                         audit_verdicts: Sequence[tuple[str, str, str]] = (),
                         completed_at_ms: int | None = None) -> None:
        """The run sheet (``dream_runs``, INSERT OR REPLACE) and its non-clean usage verdicts."""
        self._require_current("dream runs")
        detail = {"phases": [list(p) for p in phases],
                  "verdicts": {key: int((verdicts or {}).get(key, 0)) for key in DREAM_VERDICT_KEYS},
                  "skips": list(skips)}

        def run(now: int) -> None:
            done = now if completed_at_ms is None else completed_at_ms
            self.conn.execute(
                "INSERT OR REPLACE INTO dream_runs(run_id, partition_label, started_at_ms, completed_at_ms,"
                " ops_committed, detail) VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, partition, started_at_ms, done, ops_committed, to_json(detail)))
            for record_id, verdict, rationale in audit_verdicts:
                self.conn.execute(
                    "INSERT OR REPLACE INTO dream_audit_verdicts(run_id, record_id, verdict, rationale,"
                    " created_at_ms) VALUES (?, ?, ?, ?, ?)", (run_id, record_id, verdict, rationale, done))

        self._transaction(run)

    def add_pending_harvest(self, identity: str, *, cause: str = "retire", session_key: str | None = None,
                            retired_at_ms: int | None = None, status: str = "pending") -> None:
        """A retired identity waiting for the steward's exit interview (``pending_harvests``)."""
        if status not in HARVEST_STATUSES:
            raise StoreWriteError(f"unknown harvest status '{status}'")
        self._transaction(lambda now: self.conn.execute(
            "INSERT INTO pending_harvests(identity, session_key, cause, retired_at_ms, status)"
            " VALUES (?, ?, ?, ?, ?)",
            (identity, session_key, cause, now if retired_at_ms is None else retired_at_ms, status)))
