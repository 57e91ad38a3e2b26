"""The checks MobKit's validator makes without reading live rows (docs/store-format.md §7.1, §8).

Checks that need the live rows (supersede targets, the transitive taint ceiling, tombstone
recreation) run inside the write transaction, in ``effects.py``.
"""

from __future__ import annotations

import re
from typing import Any

from memory_panel.simulator.store_writer.encoding import normalize_tags
from memory_panel.simulator.store_writer.errors import StoreWriteError
from memory_panel.simulator.store_writer.limits import (
    AUTHOR_KINDS,
    BATCH_KINDS,
    BATCH_MAX_OPS,
    BODY_MAX_BYTES,
    DESCRIPTION_MAX_BYTES,
    LLM_AUTHORS,
    TITLE_MAX_BYTES,
)
from memory_panel.simulator.store_writer.ops import scope_columns
from memory_panel.store.records import MEMORY_KINDS, TRUST_TIERS

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


def check_batch_shape(staged: dict[str, Any], *, realm: str, direct: bool) -> None:
    """The checks that need no live rows: caps, realms, record limits, the trust lattice."""
    ops = staged.get("ops") or []
    if not 1 <= len(ops) <= BATCH_MAX_OPS:
        raise StoreWriteError(f"a batch must hold between 1 and {BATCH_MAX_OPS} ops, got {len(ops)}")
    if staged.get("realm") != realm:
        raise StoreWriteError(
            f"batch realm '{staged.get('realm')}' does not match this store's realm '{realm}'")
    if staged.get("kind", "fresh_write") not in BATCH_KINDS:
        raise StoreWriteError(f"unknown batch kind '{staged.get('kind')}'")
    author = staged.get("author") or {}
    if author.get("author") not in AUTHOR_KINDS:
        raise StoreWriteError(f"unknown author '{author.get('author')}'")
    for index, op in enumerate(ops):
        _check_op(op, f"op {index} ({op.get('op')})", author=author, realm=realm, direct=direct)


def _check_op(op: dict[str, Any], where: str, *, author: dict[str, Any], realm: str, direct: bool) -> None:
    kind = op.get("op")
    author_kind = author.get("author")
    if kind == "create":
        scope_kind, scope_key = scope_columns(op["scope"])
        if op["scope"].get("realm") != realm:
            raise StoreWriteError(f"{where}: scope realm '{op['scope'].get('realm')}' "
                                  f"does not match the batch realm '{realm}'")
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
        _check_trust(op.get("trust"), where, kind=kind, author_kind=author_kind, direct=direct)
    if kind == "set_rank" and op.get("rank") is not None and not 0 <= int(op["rank"]) < 2**32:
        raise StoreWriteError(f"{where}: rank must be a u32 or null")


def _check_trust(tier: Any, where: str, *, kind: str, author_kind: Any, direct: bool) -> None:
    if tier not in TRUST_TIERS:
        raise StoreWriteError(f"{where}: unknown trust tier '{tier}'")
    llm = author_kind in LLM_AUTHORS
    # §7.1: operator/application never through a staged batch; direct surfaces only
    # for non-LLM principals (docs/runtime-surfaces.md §5).
    if tier in ("application", "operator") and (llm or not direct):
        raise StoreWriteError(f"{where}: trust '{tier}' cannot be assigned by this write")
    if llm and TRUST_TIERS.index(tier) > TRUST_TIERS.index("agent_observed"):
        steward_verify = author_kind == "steward" and kind == "retier" and tier == "agent_verified"
        if not steward_verify:
            raise StoreWriteError(f"{where}: an LLM author may not assign a tier above agent_observed")
