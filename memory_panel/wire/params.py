"""MobKit's panel params in one place: limits, filters, cursors, realm names.

Both the JSON-RPC methods and the HTML views go through these functions, so a filter, limit or
cursor means the same thing on every surface (docs/store-format.md §5, docs/wire-contract.md §1).
"""

from __future__ import annotations

import datetime
from typing import Any

from memory_panel.errors import InvalidParams, UnknownRealm
from memory_panel.store.realms import realm_exists
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.records import AUTHOR_KINDS, MEMORY_KINDS, SCOPE_KINDS, STATUS_KINDS, TRUST_TIERS

# docs/wire-contract.md §1.2
RECORDS_DEFAULT_LIMIT = 50
RECORDS_MAX_LIMIT = 200
CHAIN_MAX = 32
INJECTIONS_PER_RECORD = 50
LISTS_DEFAULT_LIMIT = 20
LISTS_MAX_LIMIT = 100
FLOOR_RECORDS = 4000
FLOOR_BYTES = 33_554_432


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
    """docs/wire-contract.md §1.2: a JSON unsigned integer clamped to [1, max]; anything else is the default."""
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


def _one_of(name: str, raw: Any, allowed: tuple[str, ...]) -> str | None:
    value = param_str({name: raw}, name)
    if value is not None and value not in allowed:
        raise InvalidParams(f"unknown {name} '{value}'")
    return value


def parse_scope(raw: Any) -> str | None:
    return _one_of("scope", raw, SCOPE_KINDS)


def parse_status(raw: Any) -> str | None:
    return _one_of("status", raw, STATUS_KINDS)


def parse_kind(raw: Any) -> str | None:
    """A memory kind filter (console extension: MobKit's panel filters kind client-side)."""
    return _one_of("kind", raw, MEMORY_KINDS)


def parse_trust(raw: Any) -> str | None:
    """A trust tier filter (console extension, as ``parse_kind``)."""
    return _one_of("trust", raw, TRUST_TIERS)


def parse_author(raw: Any) -> str | None:
    """An author kind filter: the Records page's alone (never a JSON-RPC param, docs/search.md §5)."""
    try:
        return _one_of("author", raw, AUTHOR_KINDS)
    except InvalidParams as error:
        raise InvalidParams(f"{error.detail} (one of {', '.join(AUTHOR_KINDS)})") from None


def parse_realm(raw: Any) -> str | None:
    """An optional realm name, which must have a store file: the console never creates one."""
    name = param_str({"realm": raw}, "realm")
    if name is not None and not realm_exists(name):
        raise UnknownRealm(name)
    return name


def record_filter(params: dict[str, Any]) -> RecordFilter:
    """docs/wire-contract.md §1.2 (a): ``identity`` implies scope identity and that scope key unless they are given."""
    scope = parse_scope(params.get("scope"))
    status = parse_status(params.get("status"))
    identity = param_str(params, "identity")
    scope_key = param_str(params, "scope_key")
    if identity is not None:
        scope = scope or "identity"
        scope_key = scope_key if scope_key is not None else identity
    return RecordFilter(scope_kind=scope, scope_key=scope_key, status=status)


def parse_moment(raw: Any, name: str) -> int | None:
    """An ISO 8601 date-time (``2026-11-20T14:05:00Z``; without an offset it is UTC) as epoch
    milliseconds; absent or blank is None (docs/history.md §4)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    text = raw.strip() if isinstance(raw, str) else ""
    try:
        moment = datetime.datetime.fromisoformat(text) if "T" in text or " " in text else None
    except ValueError:
        moment = None
    if moment is None:
        shown = text[:80] if text else repr(raw)[:80]
        raise InvalidParams(f"{name} must be an ISO 8601 date-time such as 2026-11-20T14:05:00Z, not '{shown}'")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)
