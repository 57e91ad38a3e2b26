"""Injections and usage marks: what recall put in front of an agent, and what it used (§4.2)."""

from __future__ import annotations

import json

from memory_panel.simulator.store_writer.core import StoreCore
from memory_panel.simulator.store_writer.encoding import USAGE_FIELDS, usage_stats_json
from memory_panel.simulator.store_writer.errors import StoreWriteError
from memory_panel.simulator.store_writer.limits import INJECTION_SURFACES


class UsageWrites(StoreCore):
    def record_injection(self, record_id: str, identity: str, *, surface: str = "build",
                         session_key: str | None = None, at_ms: int | None = None,
                         count_usage: bool = True) -> None:
        """One ``injections`` row; by default also counts it in usage_stats, as the runtime does."""
        if surface not in INJECTION_SURFACES:
            raise StoreWriteError(f"unknown injection surface '{surface}'")
        at_ms = self.clock() if at_ms is None else at_ms

        def run(now: int) -> None:
            self.conn.execute(
                "INSERT INTO injections(record_id, identity, session_key, surface, at_ms) VALUES (?, ?, ?, ?, ?)",
                (record_id, identity, session_key, surface, at_ms))
            if count_usage:
                self._bump_usage(record_id, "injected", at_ms)

        self._transaction(run)

    def mark_usage(self, record_id: str, event: str, *, at_ms: int | None = None) -> None:
        """Bump one usage counter and its timestamp; rewrites usage_stats only (§4.2)."""
        at_ms = self.clock() if at_ms is None else at_ms
        self._transaction(lambda now: self._bump_usage(record_id, event, at_ms))

    def _bump_usage(self, record_id: str, event: str, at_ms: int) -> None:
        fields = USAGE_FIELDS.get(event)
        if fields is None:
            raise StoreWriteError(f"unknown usage event '{event}'")
        raw = self._row(record_id, "usage_stats")[0]
        try:
            stats = json.loads(raw)
            stats = stats if isinstance(stats, dict) else {}
        except ValueError:
            stats = {}  # §2: bad JSON reads as the default
        stats[fields[0]] = int(stats.get(fields[0]) or 0) + 1
        stats[fields[1]] = at_ms
        self.conn.execute("UPDATE records SET usage_stats=? WHERE memory_id=?", (usage_stats_json(stats), record_id))
