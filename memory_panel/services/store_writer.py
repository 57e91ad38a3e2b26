"""The store writer: the one service in this project that writes MobKit realm files.

The console itself never writes a realm (docs/wire-contract.md §C.5). This module exists so tests, benchmarks and
``seed_demo`` can produce files that look exactly like the ones the MobKit runtime writes: the same
DDL, pragmas, ids, content hashes, JSON encodings and per-op audit rows
(docs/store-format.md §1–§4 and §7). It uses plain ``sqlite3`` on purpose: the Django ORM would add
its own quoting and typing between us and the bytes we must match.

Values use MobKit's own JSON shapes as plain dicts, built with the small helpers below:

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
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_panel.store.realms import REALM_SUFFIX, agent_memory_root, encode_path_segment
from memory_panel.store.records import MEMORY_KINDS, SCOPE_KINDS, TRUST_TIERS

SCHEMA_DOMAIN = "mobkit-memory"
SCHEMA_VERSION = 3
FORMATS = ("current", "older")

LLM_AUTHORS = frozenset({"agent", "steward", "distiller"})
BATCH_KINDS = ("fresh_write", "review_verdict")
INJECTION_SURFACES = ("build", "turn")
PROPOSAL_STATUSES = ("pending", "held", "accepted", "rejected")
PROMOTION_RESOLUTIONS = ("committed", "denied", "expired")

# docs/store-format.md §8
TITLE_MAX_BYTES = 200
DESCRIPTION_MAX_BYTES = 400
BODY_MAX_BYTES = 65_536
TAGS_MAX_ENTRIES = 32
TAG_MAX_BYTES = 64
BATCH_MAX_OPS = 1024
TOMBSTONE_RECREATION_WINDOW_MS = 7 * 86_400_000
GATED_PROMOTION_EXPIRY_MS = 7 * 86_400_000
REVIEW_RATIONALE_MAX_BYTES = 400

OPERATOR: dict[str, Any] = {"author": "operator"}
APPLICATION: dict[str, Any] = {"author": "application"}

_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
_U64 = (1 << 64) - 1


class StoreWriteError(ValueError):
    """A write MobKit's validator would refuse; nothing was written."""


class ReviewRefused(StoreWriteError):
    """A quarantine review refusal (docs/store-format.md §7.4); ``reason`` is MobKit's refusal word."""

    def __init__(self, reason: str, message: str, **data: Any) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.data = data


# --------------------------------------------------------------------------------------------
# Encodings, hashes, ids (docs/store-format.md §2, §4.4)
# --------------------------------------------------------------------------------------------


def to_json(value: Any) -> str:
    """serde_json's compact encoding: no spaces, non-ASCII left as is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def content_hash(title: str, body: str) -> str:
    """SHA-256 over u64-LE title byte length, title bytes, body bytes (§4.4)."""
    t = title.encode("utf-8")
    return hashlib.sha256(len(t).to_bytes(8, "little") + t + body.encode("utf-8")).hexdigest()


def fnv1a64(data: bytes, state: int = _FNV_OFFSET) -> int:
    for byte in data:
        state = ((state ^ byte) * _FNV_PRIME) & _U64
    return state


_seq = itertools.count()
_seq_lock = threading.Lock()


def _next_seq() -> int:
    # MobKit's counter is process-global and shared by ids and tokens (§4.4).
    with _seq_lock:
        return next(_seq)


def new_memory_id(title: str, body: str) -> str:
    """``mem-{unix_nanos}-{pid:x}-{seq:x}-{fnv1a64(title ++ body):016x}``."""
    fnv = fnv1a64(body.encode("utf-8"), fnv1a64(title.encode("utf-8")))
    return f"mem-{time.time_ns()}-{os.getpid():x}-{_next_seq():x}-{fnv:016x}"


def mint_token(prefix: str) -> str:
    """``{prefix}-{unix_nanos}-{pid:x}-{seq:x}`` (prefixes: direct, stage, prop, review, …)."""
    return f"{prefix}-{time.time_ns()}-{os.getpid():x}-{_next_seq():x}"


def normalize_tags(tags: Iterable[str]) -> list[str]:
    """Trim, ASCII-lowercase, drop empties, de-duplicate, sort (a BTreeSet in MobKit, §2)."""
    tags = list(tags)
    if len(tags) > TAGS_MAX_ENTRIES:  # checked before de-duplication
        raise StoreWriteError(f"tags must contain at most {TAGS_MAX_ENTRIES} entries")
    out = set()
    for tag in tags:
        tag = _ascii_lower(tag.strip())
        if len(tag.encode("utf-8")) > TAG_MAX_BYTES:
            raise StoreWriteError(f"tags must be at most {TAG_MAX_BYTES} bytes")
        if tag:
            out.add(tag)
    return sorted(out)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _ascii_lower(value: str) -> str:
    # Rust's to_ascii_lowercase: non-ASCII letters keep their case.
    return value.translate(_ASCII_LOWER)


def collapse_whitespace(value: str) -> str:
    return " ".join(value.split())


def realm_file(realm: str, root: Path | None = None) -> Path:
    return (root if root is not None else agent_memory_root()) / f"{encode_path_segment(realm)}{REALM_SUFFIX}"


# --------------------------------------------------------------------------------------------
# MobKit JSON shapes as dicts (key order = Rust declaration order, §2)
# --------------------------------------------------------------------------------------------


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


# UsageEvent → (counter, timestamp) in usage_stats, in MobKit's key order (§2).
_USAGE_FIELDS = {
    "injected": ("injected_count", "last_injected_at_ms"),
    "explicit_recall": ("explicit_recall_count", "last_recalled_at_ms"),
    "judged_useful": ("judged_useful_count", "last_useful_at_ms"),
}


def usage_stats_json(stats: dict[str, Any]) -> str:
    """usage_stats in MobKit's key order, null timestamps omitted (§2)."""
    ordered: dict[str, Any] = {}
    for count, last in _USAGE_FIELDS.values():
        ordered[count] = int(stats.get(count) or 0)
        if stats.get(last) is not None:
            ordered[last] = stats[last]
    return to_json(ordered)


EMPTY_USAGE = usage_stats_json({})

# Known secret classes of MobKit's chokepoint (§7.1). MobKit's own regexes are unpublished
# (docs/store-format.md, open question 7); these catch the documented example triggers.
_SECRET_PATTERNS = (
    ("aws-access-key-id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}\b")),
    ("private-key", re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----")),
    ("credential-assignment", re.compile(
        r"(?i:\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token))\s*[:=]\s*['\"]?[^\s'\"]{8,}")),
)


_ANY_SECRET = re.compile("|".join(f"(?:{p.pattern})" for _, p in _SECRET_PATTERNS))


def secret_class(*texts: str) -> str | None:
    """The first secret class any text matches (the class, never the match: §7.1)."""
    joined = "\n".join(texts)
    if not _ANY_SECRET.search(joined):  # one pass for the common, clean case
        return None
    return next(name for name, pattern in _SECRET_PATTERNS if pattern.search(joined))


# --------------------------------------------------------------------------------------------
# Schema (docs/store-format.md §1.3)
# --------------------------------------------------------------------------------------------


RECORD_COLUMNS = (
    "memory_id", "scope_kind", "scope_key", "kind", "title", "description", "body", "tags", "provenance",
    "trust", "status_kind", "status_detail", "supersedes", "derived_from", "working_set_rank",
    "rank_set_at_ms", "content_hash", "created_at_ms", "updated_at_ms", "usage_stats", "tombstoned_at_ms",
)


def _records_ddl(with_ever_quarantined: bool) -> str:
    tail = ",\n  ever_quarantined INTEGER NOT NULL DEFAULT 0" if with_ever_quarantined else ""
    return (
        "CREATE TABLE IF NOT EXISTS records (\n"
        "  memory_id TEXT PRIMARY KEY, scope_kind TEXT NOT NULL, scope_key TEXT NOT NULL,"
        " kind TEXT NOT NULL,\n"
        "  title TEXT NOT NULL, description TEXT NOT NULL DEFAULT '', body TEXT NOT NULL,\n"
        "  tags TEXT NOT NULL DEFAULT '[]', provenance TEXT NOT NULL, trust TEXT NOT NULL,\n"
        "  status_kind TEXT NOT NULL, status_detail TEXT, supersedes TEXT,\n"
        "  derived_from TEXT NOT NULL DEFAULT '[]', working_set_rank INTEGER, rank_set_at_ms INTEGER,\n"
        "  content_hash TEXT NOT NULL, created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL,\n"
        f"  usage_stats TEXT NOT NULL DEFAULT '{{}}', tombstoned_at_ms INTEGER{tail})"
    )


_SHARED_DDL = (
    "CREATE INDEX IF NOT EXISTS records_scope_idx ON records(scope_kind, scope_key, status_kind)",
    "CREATE INDEX IF NOT EXISTS records_scope_hash_idx ON records(scope_kind, scope_key, content_hash)",
    "CREATE TABLE IF NOT EXISTS proposals (proposal_id TEXT PRIMARY KEY, scope_kind TEXT NOT NULL,"
    " scope_key TEXT NOT NULL, record TEXT NOT NULL, author TEXT NOT NULL,"
    " status TEXT NOT NULL DEFAULT 'pending', created_at_ms INTEGER NOT NULL, taint TEXT)",
    "CREATE TABLE IF NOT EXISTS audit (audit_id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " stage_token TEXT NOT NULL, op_index INTEGER NOT NULL, op_kind TEXT NOT NULL, memory_id TEXT,"
    " detail TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS stage (token TEXT PRIMARY KEY, batch TEXT NOT NULL,"
    " created_at_ms INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS injections (injection_id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " record_id TEXT NOT NULL, identity TEXT NOT NULL, session_key TEXT, surface TEXT NOT NULL,"
    " at_ms INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS injections_record_idx ON injections(record_id, at_ms)",
    "CREATE TABLE IF NOT EXISTS pending_harvests (identity TEXT NOT NULL, session_key TEXT,"
    " cause TEXT NOT NULL, retired_at_ms INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'pending',"
    " PRIMARY KEY (identity, retired_at_ms))",
    "CREATE TABLE IF NOT EXISTS pending_promotions (pending_id TEXT PRIMARY KEY,"
    " stage_token TEXT NOT NULL, record_id TEXT NOT NULL, scope_kind TEXT NOT NULL,"
    " scope_key TEXT NOT NULL, rationale TEXT, status TEXT NOT NULL DEFAULT 'pending',"
    " created_at_ms INTEGER NOT NULL, resolved_at_ms INTEGER)",
)

_CURRENT_ONLY_DDL = (
    "CREATE TABLE IF NOT EXISTS dream_runs (run_id TEXT PRIMARY KEY,"
    " partition_label TEXT NOT NULL DEFAULT 'realm', started_at_ms INTEGER NOT NULL,"
    " completed_at_ms INTEGER NOT NULL, ops_committed INTEGER NOT NULL, detail TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS dream_runs_completed ON dream_runs(completed_at_ms DESC)",
    "CREATE TABLE IF NOT EXISTS dream_audit_verdicts (run_id TEXT NOT NULL, record_id TEXT NOT NULL,"
    " verdict TEXT NOT NULL, rationale TEXT NOT NULL, created_at_ms INTEGER NOT NULL,"
    " resolved_at_ms INTEGER, resolution TEXT, PRIMARY KEY (run_id, record_id))",
    "CREATE INDEX IF NOT EXISTS dream_audit_verdicts_open ON dream_audit_verdicts(record_id, resolved_at_ms)",
    "CREATE TABLE IF NOT EXISTS meerkat_schema (domain TEXT PRIMARY KEY, version INTEGER NOT NULL)",
)


def _connect(path: Path, fmt: str) -> sqlite3.Connection:
    # §1.2: busy_timeout 60 s (current) / 5 s (older); WAL read back; synchronous=FULL (current only).
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                           timeout=60.0 if fmt == "current" else 5.0)
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if mode not in ("wal", "memory"):
        conn.close()
        raise StoreWriteError(f"journal_mode=WAL was refused (got '{mode}')")
    if fmt == "current":
        conn.execute("PRAGMA synchronous=FULL")
    return conn


# --------------------------------------------------------------------------------------------
# Clock and receipts
# --------------------------------------------------------------------------------------------


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class ManualClock:
    """A clock tests drive by hand, so writes can tie on updated_at_ms or cross 7-day windows."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms

    def set(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def advance(self, ms: int = 1) -> int:
        self.now_ms += ms
        return self.now_ms


@dataclass(frozen=True)
class Receipt:
    """What an applied batch returns (§4.1): its token, op count and affected memory ids."""

    token: str
    applied_ops: int
    memory_ids: list[str]


@dataclass(frozen=True)
class ReviewResult:
    """Outcome of a current-format quarantine review (§7.4): released, tombstoned or a replay."""

    outcome: str
    origin: str
    successor: str | None
    audit_token: str | None
    review: dict[str, Any] | None


# --------------------------------------------------------------------------------------------
# The writer
# --------------------------------------------------------------------------------------------


class StoreWriter:
    """Writes one realm file with MobKit's exact write semantics. Not thread-safe; one per file."""

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

    # ---- opening ----------------------------------------------------------------------------

    @classmethod
    def create(cls, realm: str, *, root: Path | None = None, format: str = "current",
               clock: Callable[[], int] | None = None, overwrite: bool = False) -> StoreWriter:
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
        conn = _connect(path, format)
        conn.execute("BEGIN")
        conn.execute(_records_ddl(with_ever_quarantined=format == "current"))
        for ddl in _SHARED_DDL + (_CURRENT_ONLY_DDL if format == "current" else ()):
            conn.execute(ddl)
        if format == "current":
            conn.execute("INSERT INTO meerkat_schema(domain, version) VALUES (?, ?)",
                         (SCHEMA_DOMAIN, SCHEMA_VERSION))
        conn.execute("COMMIT")
        return cls(path, realm=realm, fmt=format, conn=conn, clock=clock or wall_clock_ms)

    @classmethod
    def open(cls, realm: str, *, root: Path | None = None,
             clock: Callable[[], int] | None = None) -> StoreWriter:
        """An existing realm file; its format is read from its tables."""
        path = realm_file(realm, root)
        if not path.is_file():
            raise StoreWriteError(f"no realm file at {path}")
        probe = sqlite3.connect(path)
        try:
            tables = {r[0] for r in probe.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            probe.close()
        fmt = "current" if "meerkat_schema" in tables else "older"
        return cls(path, realm=realm, fmt=fmt, conn=_connect(path, fmt), clock=clock or wall_clock_ms)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def has_ever_quarantined(self) -> bool:
        return self.format == "current"

    # ---- batches (§4.1) ---------------------------------------------------------------------

    def apply_batch(self, staged: dict[str, Any], *, gate_reason: str | None = None,
                    token: str | None = None) -> Receipt:
        """Apply a batch directly (a direct write: fresh ``direct-…`` token, ``stage`` untouched)."""
        return self._apply(staged, gate_reason=gate_reason, token=token or mint_token("direct"),
                           direct=True)

    def stage(self, staged: dict[str, Any]) -> str:
        """Validate ``staged`` against the live rows and park it in ``stage``; returns the token."""
        token = mint_token("stage")
        self._check_batch_shape(staged, direct=False)
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
        self._check_batch_shape(staged, direct=direct)
        if gate_reason is not None and staged["author"].get("author") not in LLM_AUTHORS:
            raise StoreWriteError("the write gate never quarantines a non-LLM author (docs/store-format.md §7.2)")

        def run(now: int) -> list[str]:
            ids = self._apply_ops(staged, gate_reason, token, now, direct=direct)
            self.conn.execute("DELETE FROM stage WHERE token=?", (token,))
            return ids

        ids = self._transaction(run)
        return Receipt(token=token, applied_ops=len(staged["ops"]), memory_ids=ids)

    def _transaction(self, body: Callable[[int], Any], *, dry_run: bool = False) -> Any:
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

    def _check_batch_shape(self, staged: dict[str, Any], *, direct: bool) -> None:
        """The checks that need no live rows: caps, realms, record limits, the trust lattice."""
        ops = staged.get("ops") or []
        if not 1 <= len(ops) <= BATCH_MAX_OPS:
            raise StoreWriteError(f"a batch must hold between 1 and {BATCH_MAX_OPS} ops, got {len(ops)}")
        if staged.get("realm") != self.realm:
            raise StoreWriteError(
                f"batch realm '{staged.get('realm')}' does not match this store's realm '{self.realm}'")
        if staged.get("kind", "fresh_write") not in BATCH_KINDS:
            raise StoreWriteError(f"unknown batch kind '{staged.get('kind')}'")
        author = staged.get("author") or {}
        author_kind = author.get("author")
        if author_kind not in ("operator", "application", "agent", "steward", "distiller"):
            raise StoreWriteError(f"unknown author '{author_kind}'")
        llm = author_kind in LLM_AUTHORS
        for index, op in enumerate(ops):
            kind = op.get("op")
            where = f"op {index} ({kind})"
            if kind == "create":
                scope_kind, scope_key = scope_columns(op["scope"])
                if op["scope"].get("realm") != self.realm:
                    raise StoreWriteError(f"{where}: scope realm '{op['scope'].get('realm')}' "
                                          f"does not match the batch realm '{self.realm}'")
                if author_kind == "agent" and (scope_kind, scope_key) != ("identity", author.get("identity")):
                    raise StoreWriteError(f"{where}: an agent may write only its own identity scope")
            elif kind not in ("supersede", "tombstone", "retier", "set_rank"):
                raise StoreWriteError(f"{where}: unknown op")
            if kind in ("create", "supersede"):
                validate_record(op["record"])
                hit = secret_class(op["record"]["title"], op["record"].get("description", ""),
                                   op["record"]["body"], *op["record"].get("tags", []))
                if hit:
                    raise StoreWriteError(f"{where}: content matches the '{hit}' secret pattern class")
            if kind in ("create", "supersede", "retier"):
                tier = op.get("trust")
                if tier not in TRUST_TIERS:
                    raise StoreWriteError(f"{where}: unknown trust tier '{tier}'")
                # §7.1: operator/application never through a staged batch; direct surfaces only
                # for non-LLM principals (docs/runtime-surfaces.md §5).
                if tier in ("application", "operator") and (llm or not direct):
                    raise StoreWriteError(f"{where}: trust '{tier}' cannot be assigned by this write")
                if llm and TRUST_TIERS.index(tier) > TRUST_TIERS.index("agent_observed"):
                    steward_verify = author_kind == "steward" and kind == "retier" and tier == "agent_verified"
                    if not steward_verify:
                        raise StoreWriteError(
                            f"{where}: an LLM author may not assign a tier above agent_observed")
            if kind == "set_rank" and op.get("rank") is not None and not 0 <= int(op["rank"]) < 2**32:
                raise StoreWriteError(f"{where}: rank must be a u32 or null")

    def _apply_ops(self, staged: dict[str, Any], gate_reason: str | None, token: str, now: int,
                   *, direct: bool) -> list[str]:
        author = staged["author"]
        llm = author.get("author") in LLM_AUTHORS
        review = staged.get("_review")  # set only by review_quarantine (§7.5)
        tombstoned_hashes: set[tuple[str, str, str]] = set()
        ids: list[str] = []
        audit_rows: list[tuple] = []
        details: dict[tuple, str] = {}  # most ops of a batch share one audit detail
        for index, op in enumerate(staged["ops"]):
            kind = op["op"]
            quarantined = None
            if kind in ("create", "supersede"):
                memory_id, quarantined = self._insert(op, author, gate_reason, now, llm,
                                                      tombstoned_hashes)
            elif kind == "tombstone":
                memory_id = op["id"]
                row = self._row(memory_id, "scope_kind, scope_key, content_hash")
                self._check_agent_target(author, row, memory_id)
                tombstoned_hashes.add((row[0], row[1], row[2]))
                self.conn.execute(
                    "UPDATE records SET status_kind='tombstoned', status_detail=NULL,"
                    " tombstoned_at_ms=?, updated_at_ms=? WHERE memory_id=?", (now, now, memory_id))
            elif kind == "retier":
                memory_id = op["id"]
                row = self._row(memory_id, "scope_kind, scope_key, provenance")
                self._check_agent_target(author, row, memory_id)
                if op["trust"] == "agent_verified" and author.get("author") == "steward" \
                        and "verification" not in json.loads(row[2]):
                    raise StoreWriteError(f"UnverifiedRetier: record '{memory_id}' carries no verification claim")
                if TRUST_TIERS.index(op["trust"]) > TRUST_TIERS.index("agent_observed"):
                    self._check_transitive_ceiling([memory_id])
                self.conn.execute("UPDATE records SET trust=?, updated_at_ms=? WHERE memory_id=?",
                                  (op["trust"], now, memory_id))
            else:  # set_rank: rank_set_at_ms moves, updated_at_ms does not (§4.2)
                memory_id = op["id"]
                self._check_agent_target(author, self._row(memory_id, "scope_kind, scope_key"), memory_id)
                self.conn.execute("UPDATE records SET working_set_rank=?, rank_set_at_ms=? WHERE memory_id=?",
                                  (op.get("rank"), now, memory_id))
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

    def _insert(self, op: dict[str, Any], author: dict[str, Any], gate_reason: str | None, now: int, llm: bool,
                tombstoned_hashes: set[tuple[str, str, str]]) -> tuple[str, str | None]:
        record = op["record"]
        derived = list(op.get("derived_from") or [])
        rank = None
        if op["op"] == "create":
            scope_kind, scope_key = scope_columns(op["scope"])
            supersedes = None
            created = op.get("created_at_ms", now)
            updated = op.get("updated_at_ms", now)
            parents = derived
        else:
            supersedes = op["prior"]
            self._flush_rows()
            prior = self.conn.execute(
                "SELECT scope_kind, scope_key, status_kind, working_set_rank FROM records WHERE memory_id=?",
                (supersedes,)).fetchone()
            if prior is None:
                raise StoreWriteError(f"record '{supersedes}' does not exist")
            if prior[2] != "active":
                raise StoreWriteError(f"NotActive: record '{supersedes}' is {prior[2]}, not active")
            # §4.2: the successor lives in the prior's scope and inherits its rank.
            scope_kind, scope_key, rank = prior[0], prior[1], prior[3]
            self._check_agent_target(author, prior, supersedes)
            created = updated = now
            parents = [supersedes, *derived]
        title, body = record["title"], record["body"]
        digest = content_hash(title, body)
        if llm:
            self._check_tombstone_recreation(scope_kind, scope_key, digest, now, tombstoned_hashes)
        if TRUST_TIERS.index(op["trust"]) > TRUST_TIERS.index("agent_observed"):
            self._check_transitive_ceiling(parents)
        memory_id = op.get("id") or new_memory_id(title, body)
        if op["op"] == "supersede" and memory_id == supersedes:
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
                                    tombstoned_hashes: set[tuple[str, str, str]]) -> None:
        if (scope_kind, scope_key, digest) in tombstoned_hashes:
            raise StoreWriteError("TombstoneRecreation: this content was tombstoned earlier in the batch")
        self._flush_rows()
        last = self.conn.execute(
            "SELECT MAX(tombstoned_at_ms) FROM records WHERE scope_kind=? AND scope_key=?"
            " AND content_hash=? AND status_kind='tombstoned'", (scope_kind, scope_key, digest)).fetchone()[0]
        if last is not None and now - last <= TOMBSTONE_RECREATION_WINDOW_MS:
            raise StoreWriteError("TombstoneRecreation: this content was tombstoned in the last 7 days")

    # ---- direct-write conveniences (§4.2 write guards) ----------------------------------------

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

    # ---- injections and usage ---------------------------------------------------------------

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
        fields = _USAGE_FIELDS.get(event)
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

    # ---- proposals, promotions, harvests (§7.2–§7.3) -----------------------------------------

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
        proposal = self.conn.execute("SELECT record FROM proposals WHERE proposal_id=?", (source_id,)).fetchone()
        ops = []
        if proposal is not None:
            record = json.loads(proposal[0])
        else:
            row = self._row(source_id, "kind, title, description, body, tags, provenance")
            verification = json.loads(row[5]).get("verification")
            record = new_record(kind=row[0], title=row[1], description=row[2], body=row[3],
                                tags=json.loads(row[4]), verification=verification)
        ops.append(create_op(mob, record, derived_from=[] if proposal is not None else [source_id],
                             rationale=f"gated quarantine promotion: {rationale}"))
        if proposal is None:
            ops.append(tombstone_op(source_id, rationale="promoted to mob scope (gated)"))
        token = self.stage(batch(realm=self.realm, author=steward(run_id), kind="review_verdict", ops=ops))
        pending_id = pending_id or self._next_pending_id()
        scope_kind, scope_key = scope_columns(mob)
        self._transaction(lambda now: self.conn.execute(
            "INSERT INTO pending_promotions(pending_id, stage_token, record_id, scope_kind, scope_key,"
            " rationale, status, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
            (pending_id, token, source_id, scope_kind, scope_key, rationale, now)))
        return pending_id

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

    def add_pending_harvest(self, identity: str, *, cause: str = "retire", session_key: str | None = None,
                            retired_at_ms: int | None = None, status: str = "pending") -> None:
        if status not in ("pending", "harvested"):
            raise StoreWriteError(f"unknown harvest status '{status}'")
        self._transaction(lambda now: self.conn.execute(
            "INSERT INTO pending_harvests(identity, session_key, cause, retired_at_ms, status)"
            " VALUES (?, ?, ?, ?, ?)",
            (identity, session_key, cause, now if retired_at_ms is None else retired_at_ms, status)))

    # ---- steward dream runs (§7.3) --------------------------------------------------------------

    def new_dream_run_id(self) -> str:
        # §4.4: dream-{now_ms}-{seq}, seq decimal and counted per steward engine (here: per writer).
        return f"dream-{self.clock()}-{next(self._dream_seq)}"

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

    def steward_batch(self, run_id: str, ops: Sequence[dict[str, Any]], *,
                      kind: str = "fresh_write") -> Receipt:
        """One dream commit group (consolidate, proposal:…, quarantine:…, harvest:…, rank)."""
        return self.apply_batch(batch(realm=self.realm, author=steward(run_id), kind=kind, ops=ops))

    # ---- quarantine review (current format, §7.4–§7.5) -----------------------------------------

    def review_quarantine(self, origin_id: str, decision: str, *, reviewer: dict[str, Any],
                          expected_content_hash: str | None = None, rationale: str | None = None,
                          scope: dict[str, Any] | None = None) -> ReviewResult:
        """Release (successor ``<origin>-released``, then tombstone the origin) or tombstone.

        ``expected_content_hash`` defaults to the origin's own hash (a reviewer who read it).
        """
        self._require_current("quarantine review")
        if decision not in ("release", "tombstone"):
            raise StoreWriteError(f"unknown quarantine decision '{decision}'")
        if reviewer.get("kind") == "operator":
            author, prefix = OPERATOR, "operator "
        elif reviewer.get("kind") == "steward":
            author, prefix = steward(reviewer["run_id"]), ""
        else:
            raise StoreWriteError(f"unknown reviewer kind '{reviewer.get('kind')}'")
        if rationale is not None and len(rationale.encode("utf-8")) > REVIEW_RATIONALE_MAX_BYTES:
            raise StoreWriteError(f"review rationale must be at most {REVIEW_RATIONALE_MAX_BYTES} bytes")
        row = self.conn.execute(
            "SELECT scope_kind, scope_key, kind, title, description, body, tags, provenance, status_kind,"
            " status_detail, supersedes FROM records WHERE memory_id=?", (origin_id,)).fetchone()
        if row is None or (scope is not None and scope_columns(scope) != (row[0], row[1])):
            raise ReviewRefused("not_found", f"record '{origin_id}' is not in the authorized scope")
        digest = content_hash(row[3], row[5])
        expected = digest if expected_content_hash is None else expected_content_hash
        if expected != digest:
            raise ReviewRefused("content_mismatch", "the record changed since it was read")
        if row[8] == "tombstoned":
            return self._review_replay(origin_id, decision)
        if row[8] != "quarantined":
            raise ReviewRefused("not_quarantined", f"record '{origin_id}' is {row[8]}")
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
        suffix = f": {rationale}" if rationale else ""
        review: dict[str, Any] = {"verdict": decision, "reviewer": reviewer, "origin": origin_id}
        ops: list[dict[str, Any]] = []
        successor = None
        if decision == "release":
            hit = secret_class(row[3], row[4], row[5], *json.loads(row[6]))
            if hit:
                raise ReviewRefused("secret_detected", f"matches the '{hit}' secret pattern class", **{"class": hit})
            successor = f"{origin_id}-released"
            if self.conn.execute("SELECT 1 FROM records WHERE memory_id=?", (successor,)).fetchone():
                raise ReviewRefused("successor_conflict", f"'{successor}' already exists")
            verification = json.loads(row[7]).get("verification")
            record = new_record(kind=row[2], title=row[3], description=row[4], body=row[5],
                                tags=json.loads(row[6]), verification=verification)
            release_rationale = f"{prefix}quarantine release{suffix}"
            if row[10]:  # releasing a quarantined update supersedes its prior (§4.3)
                prior = self.conn.execute("SELECT status_kind FROM records WHERE memory_id=?",
                                          (row[10],)).fetchone()
                if prior is None or prior[0] != "active":
                    raise ReviewRefused("stale_update", "the prior is no longer active",
                                        prior_status=prior[0] if prior else "missing")
                ops.append(supersede_op(row[10], record, derived_from=[origin_id], id=successor,
                                        rationale=release_rationale))
            else:
                ops.append(create_op(scope_from_columns(self.realm, row[0], row[1]), record,
                                     derived_from=[origin_id], id=successor, rationale=release_rationale))
            ops.append(tombstone_op(origin_id, rationale=f"{prefix}superseded by quarantine release"))
            review["successor"] = successor
        else:
            ops.append(tombstone_op(origin_id, rationale=f"{prefix}quarantine tombstone{suffix}"))
        review["expected_content_hash"] = expected
        review["origin_quarantine_reason"] = row[9] or ""
        if expired:
            review["expired_promotions"] = [p for p, _ in expired]
        if invalidated:
            review["invalidated_promotions"] = [p for p, _ in invalidated]
        if rationale:
            review["rationale"] = rationale
        token = mint_token("review")
        staged = {**batch(realm=self.realm, author=author, kind="review_verdict", ops=ops), "_review": review}
        self._check_batch_shape(staged, direct=True)

        def run(now: int) -> None:
            for (pending_id, stage_token), status in ([(e, "expired") for e in expired]
                                                      + [(i, "denied") for i in invalidated]):
                self.conn.execute("UPDATE pending_promotions SET status=?, resolved_at_ms=? WHERE pending_id=?",
                                  (status, now, pending_id))
                self.conn.execute("DELETE FROM stage WHERE token=?", (stage_token,))
            self._apply_ops(staged, None, token, now, direct=True)

        self._transaction(run)
        return ReviewResult("released" if successor else "tombstoned", origin_id, successor, token, review)

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

    def _require_current(self, what: str) -> None:
        if self.format != "current":
            raise StoreWriteError(f"{what} needs the current store format; this file is the older format")


DREAM_VERDICT_KEYS = (
    "proposals_accepted", "proposals_rejected", "proposals_held", "proposals_gated",
    "quarantine_released", "quarantine_tombstoned", "quarantine_held", "quarantine_gated",
    "quarantine_release_blocked", "usage_load_bearing", "usage_dead_weight", "contradictions_emitted",
    "open_loops_escalated", "harvests_completed",
)


def validate_record(record: dict[str, Any]) -> None:
    """The per-record limits of docs/store-format.md §8."""
    if record.get("kind") not in MEMORY_KINDS:
        raise StoreWriteError(f"unknown memory kind '{record.get('kind')}'")
    title, body = record.get("title", ""), record.get("body", "")
    if not title.strip():
        raise StoreWriteError("title must not be empty")
    if len(title.encode("utf-8")) > TITLE_MAX_BYTES:
        raise StoreWriteError(f"title must be at most {TITLE_MAX_BYTES} bytes")
    if len(record.get("description", "").encode("utf-8")) > DESCRIPTION_MAX_BYTES:
        raise StoreWriteError(f"description must be at most {DESCRIPTION_MAX_BYTES} bytes")
    if not body.strip():
        raise StoreWriteError("body must not be empty")
    if len(body.encode("utf-8")) > BODY_MAX_BYTES:
        raise StoreWriteError(f"body must be at most {BODY_MAX_BYTES} bytes")
    normalize_tags(record.get("tags", []))
    for ref in record.get("evidence", []):
        if not isinstance(ref, dict) or not isinstance(ref.get("session_id"), str) \
                or not isinstance(ref.get("generation"), int):
            raise StoreWriteError("evidence refs need a string session_id and an integer generation")


def iter_chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
