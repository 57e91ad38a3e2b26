"""What each staged op does to ``records``, and the guards that read live rows to allow it.

docs/store-format.md §4.2 (op effects), §7.1 (agent scope, transitive taint ceiling, tombstone
recreation). Everything here runs inside the caller's write transaction.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memory_panel.simulator.store_writer.encoding import (
    EMPTY_USAGE,
    content_hash,
    new_memory_id,
    normalize_tags,
    to_json,
)
from memory_panel.simulator.store_writer.errors import StoreWriteError
from memory_panel.simulator.store_writer.limits import LLM_AUTHORS, TOMBSTONE_RECREATION_WINDOW_MS
from memory_panel.simulator.store_writer.ops import scope_columns
from memory_panel.simulator.store_writer.schema import RECORD_COLUMNS
from memory_panel.store.records import TRUST_TIERS

# (scope_kind, scope_key, content_hash) of every row a running batch has tombstoned.
TombstonedHashes = set[tuple[str, str, str]]


def _above_observed(tier: str) -> bool:
    return TRUST_TIERS.index(tier) > TRUST_TIERS.index("agent_observed")


class RowEffects:
    """The row-level half of the writer: one connection, and a buffer of record rows to insert."""

    def __init__(self, path: Path, *, realm: str, fmt: str, conn: sqlite3.Connection,
                 clock: Callable[[], int]) -> None:
        self.path = path
        self.realm = realm
        self.format = fmt
        self.conn = conn
        self.clock = clock
        self._dream_seq = itertools.count()
        columns = RECORD_COLUMNS + (("ever_quarantined",) if fmt == "current" else ())
        self._insert_sql = (f"INSERT INTO records({', '.join(columns)})"
                            f" VALUES ({', '.join('?' * len(columns))})")
        # Record rows of the running batch not yet sent to SQLite; every read flushes them first.
        self._pending_rows: list[list[Any]] = []

    @property
    def has_ever_quarantined(self) -> bool:
        return self.format == "current"

    def _apply_ops(self, staged: dict[str, Any], gate_reason: str | None, token: str, now: int,
                   *, direct: bool) -> list[str]:
        """Apply every op of ``staged`` in order, with one audit row per op (§4.1)."""
        author = staged["author"]
        review = staged.get("_review")  # set only by review_quarantine (§7.5)
        tombstoned_hashes: TombstonedHashes = set()
        ids: list[str] = []
        audit_rows: list[tuple] = []
        details: dict[tuple, str] = {}  # most ops of a batch share one audit detail
        for index, op in enumerate(staged["ops"]):
            kind = op["op"]
            memory_id, quarantined = self._apply_op(op, author, gate_reason, now, tombstoned_hashes)
            rationale = None if kind == "set_rank" else op.get("rationale")
            detail_json = details.get((kind, quarantined, rationale))
            if detail_json is None:
                detail: dict[str, Any] = {"author": author, "op": kind, "quarantined": quarantined,
                                          "rationale": rationale}
                if review is not None:
                    detail["review"] = review
                detail_json = details[(kind, quarantined, rationale)] = to_json(detail)
            audit_rows.append((token, index, kind, memory_id, detail_json, now))
            ids.append(memory_id)
        self._flush_rows()
        # Nothing in a batch reads the audit table, so its rows go in together (in op order).
        self.conn.executemany(
            "INSERT INTO audit(stage_token, op_index, op_kind, memory_id, detail, applied_at_ms)"
            " VALUES (?, ?, ?, ?, ?, ?)", audit_rows)
        return ids

    def _apply_op(self, op: dict[str, Any], author: dict[str, Any], gate_reason: str | None, now: int,
                  tombstoned_hashes: TombstonedHashes) -> tuple[str, str | None]:
        """One op's effect; returns the affected memory id and the quarantine reason it landed with."""
        kind = op["op"]
        if kind in ("create", "supersede"):
            return self._insert(op, author, gate_reason, now, tombstoned_hashes)
        memory_id = op["id"]
        if kind == "tombstone":
            row = self._row(memory_id, "scope_kind, scope_key, content_hash")
            self._check_agent_target(author, row, memory_id)
            tombstoned_hashes.add((row[0], row[1], row[2]))
            self.conn.execute(
                "UPDATE records SET status_kind='tombstoned', status_detail=NULL,"
                " tombstoned_at_ms=?, updated_at_ms=? WHERE memory_id=?", (now, now, memory_id))
        elif kind == "retier":
            self._retier(memory_id, op["trust"], author, now)
        else:  # set_rank: rank_set_at_ms moves, updated_at_ms does not (§4.2)
            self._check_agent_target(author, self._row(memory_id, "scope_kind, scope_key"), memory_id)
            self.conn.execute("UPDATE records SET working_set_rank=?, rank_set_at_ms=? WHERE memory_id=?",
                              (op.get("rank"), now, memory_id))
        return memory_id, None

    def _retier(self, memory_id: str, trust: str, author: dict[str, Any], now: int) -> None:
        row = self._row(memory_id, "scope_kind, scope_key, provenance")
        self._check_agent_target(author, row, memory_id)
        if trust == "agent_verified" and author.get("author") == "steward" \
                and "verification" not in json.loads(row[2]):
            raise StoreWriteError(f"UnverifiedRetier: record '{memory_id}' carries no verification claim")
        if _above_observed(trust):
            self._check_transitive_ceiling([memory_id])
        self.conn.execute("UPDATE records SET trust=?, updated_at_ms=? WHERE memory_id=?",
                          (trust, now, memory_id))

    def _flush_rows(self) -> None:
        if self._pending_rows:
            rows, self._pending_rows = self._pending_rows, []
            self.conn.executemany(self._insert_sql, rows)

    def _row(self, memory_id: str, columns: str) -> tuple:
        self._flush_rows()
        row = self.conn.execute(f"SELECT {columns} FROM records WHERE memory_id=?", (memory_id,)).fetchone()
        if row is None:
            raise StoreWriteError(f"record '{memory_id}' does not exist")
        return row

    @staticmethod
    def _check_agent_target(author: dict[str, Any], row: tuple, memory_id: str) -> None:
        if author.get("author") == "agent" and (row[0], row[1]) != ("identity", author.get("identity")):
            raise StoreWriteError(f"record '{memory_id}': an agent may write only its own identity scope")

    def _insert(self, op: dict[str, Any], author: dict[str, Any], gate_reason: str | None, now: int,
                tombstoned_hashes: TombstonedHashes) -> tuple[str, str | None]:
        record = op["record"]
        derived = list(op.get("derived_from") or [])
        scope_kind, scope_key, supersedes, rank, created, updated = self._placement(op, author, now)
        parents = derived if supersedes is None else [supersedes, *derived]
        title, body = record["title"], record["body"]
        digest = content_hash(title, body)
        if author.get("author") in LLM_AUTHORS:
            self._check_tombstone_recreation(scope_kind, scope_key, digest, now, tombstoned_hashes)
        if _above_observed(op["trust"]):
            self._check_transitive_ceiling(parents)
        memory_id = op.get("id") or new_memory_id(title, body)
        if supersedes is not None and memory_id == supersedes:
            raise StoreWriteError(f"record '{memory_id}' cannot supersede itself")
        provenance: dict[str, Any] = {"evidence": record.get("evidence", []), "author": author}
        if record.get("verification") is not None:
            provenance["verification"] = record["verification"]
        status, detail = ("quarantined", gate_reason) if gate_reason is not None else ("active", None)
        values = [memory_id, scope_kind, scope_key, record["kind"], title, record.get("description", ""),
                  body, to_json(normalize_tags(record.get("tags", []))), to_json(provenance), op["trust"],
                  status, detail, supersedes, to_json(derived), rank, None, digest, created, updated,
                  EMPTY_USAGE, None]
        if self.has_ever_quarantined:
            values.append(1 if gate_reason is not None or self._any_quarantined(parents) else 0)
        self._pending_rows.append(values)
        if supersedes is not None and gate_reason is None:
            self.conn.execute("UPDATE records SET status_kind='superseded', status_detail=?, updated_at_ms=?"
                              " WHERE memory_id=?", (memory_id, now, supersedes))
        # §4.2: a quarantined supersede leaves the prior active; the new row is a claimant.
        return memory_id, gate_reason

    def _placement(self, op: dict[str, Any], author: dict[str, Any],
                   now: int) -> tuple[str, str, str | None, int | None, int, int]:
        """(scope_kind, scope_key, supersedes, rank, created, updated) of a create or supersede."""
        if op["op"] == "create":
            scope_kind, scope_key = scope_columns(op["scope"])
            return scope_kind, scope_key, None, None, op.get("created_at_ms", now), op.get("updated_at_ms", now)
        supersedes = op["prior"]
        self._flush_rows()
        prior = self.conn.execute(
            "SELECT scope_kind, scope_key, status_kind, working_set_rank FROM records WHERE memory_id=?",
            (supersedes,)).fetchone()
        if prior is None:
            raise StoreWriteError(f"record '{supersedes}' does not exist")
        if prior[2] != "active":
            raise StoreWriteError(f"NotActive: record '{supersedes}' is {prior[2]}, not active")
        self._check_agent_target(author, prior, supersedes)
        # §4.2: the successor lives in the prior's scope and inherits its rank.
        return prior[0], prior[1], supersedes, prior[3], now, now

    def _any_quarantined(self, ids: Sequence[str]) -> bool:
        if not ids:
            return False
        self._flush_rows()
        marks = ", ".join("?" * len(ids))
        return self.conn.execute(
            f"SELECT 1 FROM records WHERE memory_id IN ({marks})"
            " AND (ever_quarantined=1 OR status_kind='quarantined') LIMIT 1", list(ids)).fetchone() is not None

    def _check_transitive_ceiling(self, start: Sequence[str]) -> None:
        """§7.1: nothing reachable over supersedes/derived_from may be untrusted or quarantined."""
        self._flush_rows()
        seen: set[str] = set()
        pending = list(start)
        eq = "ever_quarantined" if self.has_ever_quarantined else "0"
        while pending:
            memory_id = pending.pop()
            if memory_id in seen:
                continue
            seen.add(memory_id)
            row = self.conn.execute(
                f"SELECT trust, status_kind, {eq}, supersedes, derived_from FROM records WHERE memory_id=?",
                (memory_id,)).fetchone()
            if row is None:
                continue
            if row[0] == "untrusted" or row[1] == "quarantined" or row[2]:
                raise StoreWriteError(f"TransitiveTaintCeiling: '{memory_id}' is untrusted or quarantined")
            if row[3]:
                pending.append(row[3])
            pending.extend(json.loads(row[4] or "[]"))

    def _check_tombstone_recreation(self, scope_kind: str, scope_key: str, digest: str, now: int,
                                    tombstoned_hashes: TombstonedHashes) -> None:
        if (scope_kind, scope_key, digest) in tombstoned_hashes:
            raise StoreWriteError("TombstoneRecreation: this content was tombstoned earlier in the batch")
        self._flush_rows()
        last = self.conn.execute(
            "SELECT MAX(tombstoned_at_ms) FROM records WHERE scope_kind=? AND scope_key=?"
            " AND content_hash=? AND status_kind='tombstoned'", (scope_kind, scope_key, digest)).fetchone()[0]
        if last is not None and now - last <= TOMBSTONE_RECREATION_WINDOW_MS:
            raise StoreWriteError("TombstoneRecreation: this content was tombstoned in the last 7 days")
