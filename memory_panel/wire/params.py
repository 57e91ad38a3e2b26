"""MobKit's panel params in one place: limits, filters, cursors, realm names.

Both the JSON-RPC methods and the HTML views go through these functions, so a filter, limit or
cursor means the same thing on every surface (spec memory-store §5, console-panel-and-access §1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_panel.errors import InvalidParams, UnknownRealm
from memory_panel.store.realms import realm_exists
from memory_panel.store.records import MEMORY_KINDS, SCOPE_KINDS, STATUS_KINDS, TRUST_TIERS

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


def param_str(params: dict[str, Any], name: str) -> str | None:
    """A trimmed string param; absent, null or empty after trimming all mean 'not given'."""
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidParams(f"{name} must be a string")
    value = value.strip()
    return value or None


def parse_limit(raw: Any, *, default: int, maximum: int) -> int:
    """spec §1.2: a JSON unsigned integer clamped to [1, max]; anything else is the default."""
    # MobKit reads the value with serde's as_u64: a bool, a float or anything past u64 is not one.
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < 2**64:
        return default
    return max(1, min(raw, maximum))


def query_uint(raw: str) -> int | None:
    """An unsigned integer from a query string (ASCII digits only), or None when it is not one.

    Anything past u64 reads as 2**64, which every limit clamps: Python refuses ``int()`` of over
    4,300 digits, and ``"²".isdigit()`` is true, so neither may reach ``int()``.
    """
    text = raw.strip()
    if not text.isascii() or not text.isdigit():
        return None
    return 2**64 if len(text.lstrip("0")) > 20 else int(text)


def parse_scope(raw: Any) -> str | None:
    scope = param_str({"scope": raw}, "scope")
    if scope is not None and scope not in SCOPE_KINDS:
        raise InvalidParams(f"unknown scope '{scope}'")
    return scope


def parse_status(raw: Any) -> str | None:
    status = param_str({"status": raw}, "status")
    if status is not None and status not in STATUS_KINDS:
        raise InvalidParams(f"unknown status '{status}'")
    return status


def parse_kind(raw: Any) -> str | None:
    """A memory kind filter (console extension: MobKit's panel filters kind client-side)."""
    kind = param_str({"kind": raw}, "kind")
    if kind is not None and kind not in MEMORY_KINDS:
        raise InvalidParams(f"unknown kind '{kind}'")
    return kind


def parse_trust(raw: Any) -> str | None:
    """A trust tier filter (console extension, as ``parse_kind``)."""
    trust = param_str({"trust": raw}, "trust")
    if trust is not None and trust not in TRUST_TIERS:
        raise InvalidParams(f"unknown trust '{trust}'")
    return trust


def parse_realm(raw: Any) -> str | None:
    """An optional realm name, which must have a store file: the console never creates one."""
    name = param_str({"realm": raw}, "realm")
    if name is not None and not realm_exists(name):
        raise UnknownRealm(name)
    return name


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
