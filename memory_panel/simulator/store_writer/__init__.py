"""The store writer: the one service in this project that writes MobKit realm files.

The console itself never writes a realm (docs/wire-contract.md §C.5). This package exists so tests, benchmarks and
``seed_demo`` can produce files that look exactly like the ones the MobKit runtime writes: the same
DDL, pragmas, ids, content hashes, JSON encodings and per-op audit rows
(docs/store-format.md §1–§4 and §7). It uses plain ``sqlite3`` on purpose: the Django ORM would add
its own quoting and typing between us and the bytes we must match.

Values use MobKit's own JSON shapes as plain dicts, built with the small helpers in ``ops.py``:

- scopes (tag ``scope``): ``identity_scope(realm, "identity:luka")``, ``mob_scope(realm, "ops")``,
  ``operator_scope(realm, "oncall")``, ``realm_scope(realm)``;
- authors (tag ``author``): ``OPERATOR``, ``APPLICATION``, ``agent("identity:luka")``,
  ``steward(run_id)``, ``distiller(run_id)``;
- ``new_record(kind=..., title=..., body=...)`` is a NewMemoryRecord; ``create_op``,
  ``supersede_op``, ``tombstone_op``, ``retier_op`` and ``set_rank_op`` are StagedOps.

Usage::

    with StoreWriter.create("default", clock=ManualClock(1_700_000_000_000)) as writer:
        luka = identity_scope("default", "identity:luka")
        first = writer.remember(luka, "Prefers window seats", "Asked for a window seat twice.")
        second = writer.supersede(first, "Prefers aisle seats", "Changed mind after the Oslo trip.")
        writer.forget(second)
        receipt = writer.apply_batch(batch(realm="default", author=agent("identity:luka"),
                                           ops=[create_op(luka, new_record(...))]),
                                     gate_reason="session tainted by web tool 'web_fetch'")

Every write is one transaction; a validation failure raises ``StoreWriteError`` (or
``ReviewRefused`` for a quarantine review) and leaves the file untouched.

The package, by what each module does: ``encoding`` (ids, hashes, tags, JSON), ``ops`` (scopes,
authors, records, ops, batches), ``validation`` (the checks that need no rows), ``schema`` (DDL,
pragmas, formats), ``core`` (opening a file, transactions, stage/commit/apply) over ``effects``
(what each op does to the rows), and one module per runtime-side behaviour: ``direct``, ``usage``,
``proposals``, ``dreams``, ``review``; ``writer`` puts them together as ``StoreWriter``.
"""

from __future__ import annotations

from memory_panel.simulator.store_writer.clock import ManualClock, wall_clock_ms
from memory_panel.simulator.store_writer.core import Receipt, StoreCore, iter_chunks
from memory_panel.simulator.store_writer.dreams import DREAM_VERDICT_KEYS
from memory_panel.simulator.store_writer.encoding import (
    EMPTY_USAGE,
    USAGE_FIELDS,
    collapse_whitespace,
    content_hash,
    fnv1a64,
    mint_token,
    new_memory_id,
    normalize_tags,
    to_json,
    usage_stats_json,
)
from memory_panel.simulator.store_writer.errors import ReviewRefused, StoreWriteError
from memory_panel.simulator.store_writer.limits import (
    BATCH_KINDS,
    BATCH_MAX_OPS,
    BODY_MAX_BYTES,
    DESCRIPTION_MAX_BYTES,
    GATED_PROMOTION_EXPIRY_MS,
    INJECTION_SURFACES,
    LLM_AUTHORS,
    PROMOTION_RESOLUTIONS,
    PROPOSAL_STATUSES,
    REVIEW_RATIONALE_MAX_BYTES,
    TAG_MAX_BYTES,
    TAGS_MAX_ENTRIES,
    TITLE_MAX_BYTES,
    TOMBSTONE_RECREATION_WINDOW_MS,
)
from memory_panel.simulator.store_writer.ops import (
    APPLICATION,
    OPERATOR,
    agent,
    batch,
    create_op,
    distiller,
    evidence_ref,
    identity_scope,
    mob_scope,
    new_record,
    operator_scope,
    realm_scope,
    retier_op,
    scope_columns,
    scope_from_columns,
    set_rank_op,
    steward,
    supersede_op,
    tombstone_op,
    verification_claim,
)
from memory_panel.simulator.store_writer.review import ReviewResult
from memory_panel.simulator.store_writer.schema import FORMATS, RECORD_COLUMNS, SCHEMA_DOMAIN, SCHEMA_VERSION, realm_file
from memory_panel.simulator.store_writer.validation import secret_class, validate_record
from memory_panel.simulator.store_writer.writer import StoreWriter

__all__ = [
    "APPLICATION", "BATCH_KINDS", "BATCH_MAX_OPS", "BODY_MAX_BYTES", "DESCRIPTION_MAX_BYTES",
    "DREAM_VERDICT_KEYS", "EMPTY_USAGE", "FORMATS", "GATED_PROMOTION_EXPIRY_MS", "INJECTION_SURFACES",
    "LLM_AUTHORS", "ManualClock", "OPERATOR", "PROMOTION_RESOLUTIONS", "PROPOSAL_STATUSES",
    "RECORD_COLUMNS", "REVIEW_RATIONALE_MAX_BYTES", "Receipt", "ReviewRefused", "ReviewResult",
    "SCHEMA_DOMAIN", "SCHEMA_VERSION", "StoreCore", "StoreWriteError", "StoreWriter", "TAGS_MAX_ENTRIES",
    "TAG_MAX_BYTES", "TITLE_MAX_BYTES", "TOMBSTONE_RECREATION_WINDOW_MS", "USAGE_FIELDS", "agent", "batch",
    "collapse_whitespace", "content_hash", "create_op", "distiller", "evidence_ref", "fnv1a64",
    "identity_scope", "iter_chunks", "mint_token", "mob_scope", "new_memory_id", "new_record",
    "normalize_tags", "operator_scope", "realm_file", "realm_scope", "retier_op", "scope_columns",
    "scope_from_columns", "secret_class", "set_rank_op", "steward", "supersede_op", "to_json",
    "tombstone_op", "usage_stats_json", "validate_record", "verification_claim", "wall_clock_ms",
]
