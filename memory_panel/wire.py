"""MobKit's panel wire format in one place: record JSON, list rows, cursors, params, limits.

Both the JSON-RPC methods and the HTML views go through these functions, so a filter, limit or
cursor means the same thing on every surface (spec memory-store §5, console-panel-and-access §1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mobkit_console.rpc.errors import NOT_FOUND, RpcError, invalid_params
from memory_panel.realms import UnknownRealm, realm_exists
from memory_panel.records import MEMORY_KINDS, SCOPE_KINDS, STATUS_KINDS, TRUST_TIERS, MemoryRecord

if TYPE_CHECKING:
    from memory_panel.selectors import InjectionRow

# spec console-panel-and-access §1.2
RECORDS_DEFAULT_LIMIT = 50
RECORDS_MAX_LIMIT = 200
CHAIN_MAX = 32
INJECTIONS_PER_RECORD = 50
LISTS_DEFAULT_LIMIT = 20
LISTS_MAX_LIMIT = 100
FLOOR_RECORDS = 4000
FLOOR_BYTES = 33_554_432


@dataclass(frozen=True)
class RecordFilter:
    """The records filters: MobKit's scope, scope_key and status, plus the console's kind and trust."""

    scope_kind: str | None = None
    scope_key: str | None = None
    status: str | None = None
    # Console additions (MobKit filters kind and trust client-side): the HTML Records page passes
    # them so keyset pages stay full; the RPC never sets them, keeping MobKit's params exact.
    kind: str | None = None
    trust: str | None = None


@dataclass(frozen=True, order=True)
class Cursor:
    """A keyset position: the (updated_at_ms, memory_id) of the last row shown."""

    updated_at_ms: int
    memory_id: str

    def encode(self) -> str:
        return f"{self.updated_at_ms}:{self.memory_id}"


def parse_cursor(raw: Any) -> Cursor | None:
    """``"<updated_at_ms>:<memory_id>"``, split at the first ':'; empty means no cursor."""
    if raw is not None and not isinstance(raw, str):
        # spec §1.2 (a): the cursor is a string; any other JSON value is a malformed cursor.
        raise invalid_params("malformed cursor")
    text = param_str({"cursor": raw}, "cursor")
    if text is None:
        return None
    ms, sep, memory_id = text.partition(":")
    # spec §5.1: the left part must parse as u64 (digits only, no sign) and the right be non-empty.
    if not sep or not memory_id or not ms.isascii() or not ms.isdigit() or int(ms) >= 2**64:
        raise invalid_params("malformed cursor")
    return Cursor(int(ms), memory_id)


def param_str(params: dict[str, Any], name: str) -> str | None:
    """A trimmed string param; absent, null or empty after trimming all mean 'not given'."""
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid_params(f"{name} must be a string")
    value = value.strip()
    return value or None


def parse_limit(raw: Any, *, default: int, maximum: int) -> int:
    """spec §1.2: a JSON unsigned integer clamped to [1, max]; anything else is the default."""
    # MobKit reads the value with serde's as_u64: a bool, a float or anything past u64 is not one.
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < 2**64:
        return default
    return max(1, min(raw, maximum))


def parse_scope(raw: Any) -> str | None:
    scope = param_str({"scope": raw}, "scope")
    if scope is not None and scope not in SCOPE_KINDS:
        raise invalid_params(f"unknown scope '{scope}'")
    return scope


def parse_status(raw: Any) -> str | None:
    status = param_str({"status": raw}, "status")
    if status is not None and status not in STATUS_KINDS:
        raise invalid_params(f"unknown status '{status}'")
    return status


def parse_kind(raw: Any) -> str | None:
    """A memory kind filter (console extension: MobKit's panel filters kind client-side)."""
    kind = param_str({"kind": raw}, "kind")
    if kind is not None and kind not in MEMORY_KINDS:
        raise invalid_params(f"unknown kind '{kind}'")
    return kind


def parse_trust(raw: Any) -> str | None:
    """A trust tier filter (console extension, as ``parse_kind``)."""
    trust = param_str({"trust": raw}, "trust")
    if trust is not None and trust not in TRUST_TIERS:
        raise invalid_params(f"unknown trust '{trust}'")
    return trust


def unknown_record(memory_id: str) -> RpcError:
    return RpcError(NOT_FOUND, f"unknown memory record '{memory_id}'")


def status_json(record: MemoryRecord) -> dict[str, str]:
    if record.status == "superseded":
        return {"status": "superseded", "by": record.status_detail or ""}
    if record.status == "quarantined":
        return {"status": "quarantined", "reason": record.status_detail or ""}
    return {"status": record.status}


def record_json(record: MemoryRecord, *, with_body: bool) -> dict[str, Any]:
    """serde of MemoryRecord, field for field; list rows swap ``body`` for ``body_bytes``."""
    out: dict[str, Any] = {
        "id": record.id,
        "scope": record.scope,
        "kind": record.kind,
        "title": record.title,
        "description": record.description,
    }
    if with_body:
        out["body"] = record.body
    else:
        out["body_bytes"] = record.body_bytes
    out["tags"] = record.tags
    out["provenance"] = record.provenance
    out["trust"] = record.trust
    out["status"] = status_json(record)
    if record.supersedes is not None:
        out["supersedes"] = record.supersedes
    out["derived_from"] = record.derived_from
    if record.working_set_rank is not None:
        out["working_set_rank"] = record.working_set_rank
    out["created_at_ms"] = record.created_at_ms
    out["updated_at_ms"] = record.updated_at_ms
    out["usage"] = record.usage
    out["ever_quarantined"] = record.ever_quarantined
    if with_body:
        # The newest MobKit console adds the hash quarantine/decide needs (spec §1.2 (b)).
        out["content_hash"] = record.content_hash
    if record.malformed:
        out["malformed_columns"] = list(record.malformed)
    return out


def parse_realm(raw: Any) -> str | None:
    """An optional realm name, which must have a store file: the console never creates one."""
    name = param_str({"realm": raw}, "realm")
    if name is not None and not realm_exists(name):
        raise UnknownRealm(name)
    return name


def injection_json(row: InjectionRow, *, with_realm: bool) -> dict[str, Any]:
    """Per-record ledger rows omit a null session_key; panel/injections rows carry realm and null."""
    out: dict[str, Any] = {"realm": row.realm} if with_realm else {}
    out.update(record_id=row.record_id, identity=row.identity)
    if with_realm or row.session_key is not None:
        out["session_key"] = row.session_key
    out.update(surface=row.surface, at_ms=row.at_ms)
    return out


def record_filter(params: dict[str, Any]) -> RecordFilter:
    """spec §1.2 (a): ``identity`` implies scope identity and that scope key unless they are given."""
    scope = parse_scope(params.get("scope"))
    status = parse_status(params.get("status"))
    identity = param_str(params, "identity")
    scope_key = param_str(params, "scope_key")
    if identity is not None:
        scope = scope or "identity"
        scope_key = scope_key if scope_key is not None else identity
    return RecordFilter(scope_kind=scope, scope_key=scope_key, status=status)
