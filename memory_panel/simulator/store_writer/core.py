"""The writer's core: opening a realm file, transactions, and MobKit's batch life cycle.

docs/store-format.md §4.1: every write is a batch, applied in one transaction with one audit row per
op; ``stage`` parks a validated batch, ``commit`` re-validates and applies it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from memory_panel.simulator.store_writer.clock import wall_clock_ms
from memory_panel.simulator.store_writer.effects import RowEffects
from memory_panel.simulator.store_writer.encoding import mint_token, to_json
from memory_panel.simulator.store_writer.errors import StoreWriteError
from memory_panel.simulator.store_writer.limits import BATCH_MAX_OPS, LLM_AUTHORS
from memory_panel.simulator.store_writer.ops import batch
from memory_panel.simulator.store_writer.schema import FORMATS, connect, create_schema, file_format, realm_file
from memory_panel.simulator.store_writer.validation import check_batch_shape


@dataclass(frozen=True)
class Receipt:
    """What an applied batch returns (§4.1): its token, op count and affected memory ids."""

    token: str
    applied_ops: int
    memory_ids: list[str]


class StoreCore(RowEffects):
    """Opens one realm file and applies batches to it; the runtime-side behaviours build on this."""

    @classmethod
    def create(cls, realm: str, *, root: Path | None = None, format: str = "current",
               clock: Callable[[], int] | None = None, overwrite: bool = False) -> Self:
        """A new realm file at ``<root>/<enc(realm)>.sqlite3`` in the chosen format.

        Refuses an existing file unless ``overwrite`` (then the old file and its WAL go first).
        """
        if format not in FORMATS:
            raise StoreWriteError(f"unknown store format '{format}' (expected current or older)")
        path = realm_file(realm, root)
        if path.exists():
            if not overwrite:
                raise FileExistsError(f"realm file already exists: {path}")
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(path, format)
        create_schema(conn, format)
        return cls(path, realm=realm, fmt=format, conn=conn, clock=clock or wall_clock_ms)

    @classmethod
    def open(cls, realm: str, *, root: Path | None = None,
             clock: Callable[[], int] | None = None) -> Self:
        """An existing realm file; its format is read from its tables."""
        path = realm_file(realm, root)
        if not path.is_file():
            raise StoreWriteError(f"no realm file at {path}")
        fmt = file_format(path)
        return cls(path, realm=realm, fmt=fmt, conn=connect(path, fmt), clock=clock or wall_clock_ms)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- batches (§4.1) ---------------------------------------------------------------------

    def apply_batch(self, staged: dict[str, Any], *, gate_reason: str | None = None,
                    token: str | None = None) -> Receipt:
        """Apply a batch directly (a direct write: fresh ``direct-…`` token, ``stage`` untouched)."""
        return self._apply(staged, gate_reason=gate_reason, token=token or mint_token("direct"),
                           direct=True)

    def stage(self, staged: dict[str, Any]) -> str:
        """Validate ``staged`` against the live rows and park it in ``stage``; returns the token."""
        token = mint_token("stage")
        check_batch_shape(staged, realm=self.realm, direct=False)
        self._transaction(lambda now: self._apply_ops(staged, None, token, now, direct=False),
                          dry_run=True)
        self._transaction(lambda now: self.conn.execute(
            "INSERT INTO stage(token, batch, created_at_ms) VALUES (?, ?, ?)",
            (token, to_json(self._wire_batch(staged)), now)))
        return token

    def commit(self, token: str, *, gate_reason: str | None = None) -> Receipt:
        """Load a staged batch, re-validate and apply it, and delete its stage row (§4.1)."""
        row = self.conn.execute("SELECT batch FROM stage WHERE token=?", (token,)).fetchone()
        if row is None:
            raise StoreWriteError(f"unknown or expired stage token '{token}'")
        staged = json.loads(row[0])
        staged.setdefault("kind", "fresh_write")  # older-format batches carry no kind
        return self._apply(staged, gate_reason=gate_reason, token=token, direct=False)

    def bulk_apply(self, ops: Iterable[dict[str, Any]], *, author: dict[str, Any],
                   kind: str = "fresh_write", chunk_size: int = BATCH_MAX_OPS,
                   on_chunk: Callable[[Receipt], None] | None = None) -> int:
        """Apply a long stream of ops as consecutive direct batches of ``chunk_size`` ops.

        Each chunk is an ordinary batch (one transaction, one token, one applied_at_ms), so rows and
        audit rows are exactly what ``apply_batch`` writes; only the per-batch overhead is shared.
        Returns the number of ops applied.
        """
        total = 0
        for chunk in iter_chunks(ops, chunk_size):
            receipt = self.apply_batch(batch(realm=self.realm, author=author, kind=kind, ops=chunk))
            total += receipt.applied_ops
            if on_chunk is not None:
                on_chunk(receipt)
        return total

    def _apply(self, staged: dict[str, Any], *, gate_reason: str | None, token: str,
               direct: bool) -> Receipt:
        check_batch_shape(staged, realm=self.realm, direct=direct)
        if gate_reason is not None and staged["author"].get("author") not in LLM_AUTHORS:
            raise StoreWriteError("the write gate never quarantines a non-LLM author (docs/store-format.md §7.2)")

        def run(now: int) -> list[str]:
            ids = self._apply_ops(staged, gate_reason, token, now, direct=direct)
            self.conn.execute("DELETE FROM stage WHERE token=?", (token,))
            return ids

        ids = self._transaction(run)
        return Receipt(token=token, applied_ops=len(staged["ops"]), memory_ids=ids)

    def _transaction(self, body: Callable[[int], Any], *, dry_run: bool = False) -> Any:
        """Run ``body(now)`` in one ``BEGIN IMMEDIATE`` transaction: all of it is written or none."""
        now = self.clock()
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            result = body(now)
        except sqlite3.IntegrityError as exc:
            self._pending_rows = []
            self.conn.execute("ROLLBACK")
            raise StoreWriteError(f"store constraint violated: {exc}") from exc
        except BaseException:
            self._pending_rows = []
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("ROLLBACK" if dry_run else "COMMIT")
        return result

    def _wire_batch(self, staged: dict[str, Any]) -> dict[str, Any]:
        wire = {"realm": staged["realm"], "author": staged["author"]}
        if self.format == "current":
            wire["kind"] = staged.get("kind", "fresh_write")
        wire["ops"] = staged["ops"]
        return wire

    def _require_current(self, what: str) -> None:
        if self.format != "current":
            raise StoreWriteError(f"{what} needs the current store format; this file is the older format")


def iter_chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
