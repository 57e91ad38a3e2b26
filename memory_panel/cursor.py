"""The records keyset: MobKit's cursor text and the predicate that resumes after it, once.

Records are ordered newest first by ``(updated_at_ms, memory_id)`` (docs/store-format.md §5.1);
a cursor names the last row shown and the next page starts strictly after it.
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_panel.errors import InvalidParams

if TYPE_CHECKING:
    from memory_panel.store.records import MemoryRecord

U64_LIMIT = 2**64
U64_DIGITS = len(str(U64_LIMIT - 1))
# SQLite stores integers as signed 64-bit, so every stored timestamp is below a larger cursor.
SQLITE_INT_MAX = 2**63 - 1


@dataclass(frozen=True, order=True)
class Cursor:
    """A keyset position: the (updated_at_ms, memory_id) of the last row shown."""

    updated_at_ms: int
    memory_id: str

    @classmethod
    def after(cls, record: MemoryRecord) -> Cursor:
        return cls(record.updated_at_ms, record.id)

    def encode(self) -> str:
        return f"{self.updated_at_ms}:{self.memory_id}"

    def key(self) -> tuple[int, str]:
        return (self.updated_at_ms, self.memory_id)


def parse_cursor(raw: Any) -> Cursor | None:
    """``"<updated_at_ms>:<memory_id>"``, split at the first ':'; absent or blank means no cursor."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        # docs/wire-contract.md §1.2 (a): the cursor is a string; any other JSON value is malformed.
        raise InvalidParams("malformed cursor")
    text = raw.strip()
    if not text:
        return None
    ms, sep, memory_id = text.partition(":")
    # docs/store-format.md §5.1: the left part parses as u64 (digits only, no sign), the right is non-empty.
    # Length first: Python refuses int() of over 4,300 digits, and no u64 has more than 20.
    if not sep or not memory_id or not ms.isascii() or not ms.isdigit() or len(ms.lstrip("0")) > U64_DIGITS:
        raise InvalidParams("malformed cursor")
    if int(ms) >= U64_LIMIT:
        raise InvalidParams("malformed cursor")
    return Cursor(int(ms), memory_id)


# docs/realm-failures.md §2: an updated_at_ms a hand edit left as text, a float, NULL or negative
# decodes as 0, so it must sort as 0 too — else a cursor taken after that row skips the rest.
ORDER_MS = "(CASE WHEN typeof(updated_at_ms) = 'integer' AND updated_at_ms >= 0 THEN updated_at_ms ELSE 0 END)"


def keyset_predicate(cursor: Cursor, *, placeholder: str = "?", order_ms: str = "updated_at_ms") -> tuple[str, list[Any]]:
    """SQL that keeps the rows after ``cursor`` in the records order, with its arguments.

    MobKit writes it as ``updated_at_ms < ? OR (updated_at_ms = ? AND memory_id < ?)``; the row
    value means the same, and SQLite seeks an index to a row value where it plans the OR form
    with bound parameters as a scan from the newest entry.
    """
    if cursor.updated_at_ms > SQLITE_INT_MAX:  # a valid u64 cursor SQLite cannot bind: every row is after it
        return "1", []
    return f"({order_ms}, memory_id) < ({placeholder}, {placeholder})", [cursor.updated_at_ms, cursor.memory_id]


# The pages at a moment and the changes between two (docs/history.md §4, §5) are ordered by a
# span's key in the console's history file: its moment, then the realm's name, then the record's
# rowid in that realm and the span's number among the record's changes at that moment. Several
# changes of one record can share a moment, so the key names the change, not the record. Cursor
# text: "m1.<at_ms>.<rowid>.<n>.<realm>" (the realm last: its name may hold any character).

MOMENT_CURSOR_PREFIX = "m1."
SQLITE_INT_MIN = -(2**63)


@dataclass(frozen=True, order=True)
class MomentCursor:
    """A position in the history pages: the key of the last change or record shown."""

    at_ms: int
    realm: str
    record: int
    n: int

    def encode(self) -> str:
        return f"{MOMENT_CURSOR_PREFIX}{self.at_ms}.{self.record}.{self.n}.{self.realm}"

    def key_in(self, realm: str) -> tuple[int, int, int]:
        """The position as a bound on ``realm``'s own keys (moment, rowid, n): at the cursor's
        moment, a realm named before the cursor's sorts wholly below it, one named after wholly above."""
        if realm == self.realm:
            return (self.at_ms, self.record, self.n)
        below = realm < self.realm
        return (self.at_ms, SQLITE_INT_MAX, SQLITE_INT_MAX) if below else (self.at_ms, SQLITE_INT_MIN, -1)


def _int_text(text: str, low: int, high: int) -> int | None:
    digits = text[1:] if text.startswith("-") else text
    if not digits.isascii() or not digits.isdigit() or len(digits) > U64_DIGITS:
        return None
    value = int(text)
    return value if low <= value <= high else None


def parse_moment_cursor(raw: Any) -> MomentCursor | None:
    """A cursor from a history page's "Load more"; absent or blank means the first page."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str):
        raise InvalidParams("malformed cursor")
    text = raw.strip()
    if not text.startswith(MOMENT_CURSOR_PREFIX):
        if parse_cursor(text) is not None:  # "<ms>:<memory_id>": ordered by memory_id, which these pages are no more
            raise InvalidParams("cursor from an older version of this page: load the page again without it")
        raise InvalidParams("malformed cursor")
    parts = text[len(MOMENT_CURSOR_PREFIX) :].split(".", 3)
    if len(parts) != 4 or not parts[3]:
        raise InvalidParams("malformed cursor")
    at_ms, record, n = (_int_text(parts[0], 0, SQLITE_INT_MAX), _int_text(parts[1], SQLITE_INT_MIN, SQLITE_INT_MAX),
                        _int_text(parts[2], 0, SQLITE_INT_MAX))
    if at_ms is None or record is None or n is None:
        raise InvalidParams("malformed cursor")
    return MomentCursor(at_ms, parts[3], record, n)


# ---------------------------------------------------------------------------------------------
# Search results are ordered by window, score, then newest first (docs/search.md §3); their
# cursor is the console's own, opaque to callers: "s1." and base64url of [bm25, updated_at_ms,
# memory_id, query digest, window shift or null, window]. The digest ties a cursor to the query
# it came from; the shift keeps the ranking windows of the first page for the whole walk.

SEARCH_CURSOR_PREFIX = "s1."


@dataclass(frozen=True)
class SearchCursor:
    bm25: float
    updated_at_ms: int
    memory_id: str
    query_digest: str
    window_shift: int | None = None
    window: int = 0

    def encode(self) -> str:
        fields = [self.bm25, self.updated_at_ms, self.memory_id, self.query_digest, self.window_shift, self.window]
        return _opaque(SEARCH_CURSOR_PREFIX, fields)


def _opaque(prefix: str, fields: list[Any]) -> str:
    """``fields`` as a cursor the caller hands back unread: JSON in URL-safe base64 after ``prefix``."""
    payload = json.dumps(fields, separators=(",", ":"))
    return prefix + base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def _opened(raw: Any, prefix: str) -> Any:
    """The JSON value of an ``_opaque`` cursor, None for an absent or blank one; ``InvalidParams``
    for anything else. What the value holds is its parser's to check."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str) or not raw.strip().startswith(prefix):
        raise InvalidParams("malformed cursor")
    encoded = raw.strip()[len(prefix) :]
    try:
        # RecursionError: deeply nested brackets; the decoder gives up, the request does not.
        return json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (ValueError, TypeError, RecursionError):
        raise InvalidParams("malformed cursor") from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_search_cursor(raw: Any, *, query_digest: str) -> SearchCursor | None:
    """A cursor from ``next_cursor`` of the same query; absent or blank means the first page."""
    fields = _opened(raw, SEARCH_CURSOR_PREFIX)
    if fields is None:
        return None
    if not isinstance(fields, list) or len(fields) != 6:
        raise InvalidParams("malformed cursor")
    bm25, updated_at_ms, memory_id, digest, shift, window = fields
    # docs/realm-failures.md §3: every field must be one the console could have written, so
    # nothing a caller invents reaches SQLite (an integer it cannot bind, text it cannot encode).
    if (
        not _is_finite_number(bm25)
        or not (_is_int(updated_at_ms) and 0 <= updated_at_ms <= SQLITE_INT_MAX)
        or not _is_utf8_text(memory_id)
        or not isinstance(digest, str)
        or not (shift is None or (_is_int(shift) and 0 < shift < 63))
        or not (_is_int(window) and 0 <= window < 2**62)
    ):
        raise InvalidParams("malformed cursor")
    if digest != query_digest:
        raise InvalidParams("cursor belongs to another query or filters: start again without it")
    return SearchCursor(float(bm25), updated_at_ms, memory_id, digest, shift, window)


def _is_finite_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) if isinstance(value, float) else abs(value) <= SQLITE_INT_MAX


def _is_utf8_text(value: Any) -> bool:
    """A str SQLite can bind: a lone surrogate (JSON lets "\\ud800" through) is not text."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True



# Two realms compared by logical key (docs/history.md §6): a list is ordered by (scope kind,
# scope key, title), and its cursor is the last key shown, opaque like the search cursor.
KEY_CURSOR_PREFIX = "k1."


def encode_key_cursor(key: tuple[str, str, str]) -> str:
    return _opaque(KEY_CURSOR_PREFIX, list(key))


def parse_key_cursor(raw: Any) -> tuple[str, str, str] | None:
    """A logical key from ``encode_key_cursor``; absent or blank means the first page."""
    key = _opened(raw, KEY_CURSOR_PREFIX)
    if key is None:
        return None
    if not isinstance(key, list) or len(key) != 3 or not all(_is_utf8_text(part) for part in key):
        raise InvalidParams("malformed cursor")
    return (key[0], key[1], key[2])

# The utility order (docs/panel-tabs.md §3): dead first, then ratio ascending (never injected
# last), then bytes spent descending, ties in the records order (updated_at_ms, memory_id desc).
# MobKit sorts one loaded page in the browser and has no cursor for it; the console pages the
# whole store, so the order is one text key per record that sorts ascending, and the cursor is
# that key: a distinct, still opaque format ("u1." + key) beside the recency cursor.

UTILITY_CURSOR_PREFIX = "u1."
_RATIO_SCALE = 10**12
_RATIO_NEVER = 10**21 - 1  # never injected: no ratio, sorts after every real one
_WIDE = 10**20 - 1


def utility_rank(*, injected: int, useful: int, body_bytes: int, updated_at_ms: int) -> int:
    """The utility key's leading 61 digits as one number: everything but the id's tie-break."""
    dead = injected >= 3 and useful == 0  # docs/panel-tabs.md §3 DEAD
    ratio = min(useful * _RATIO_SCALE // injected, _WIDE) if injected > 0 else _RATIO_NEVER
    spent = min(max(injected, 0) * max(body_bytes, 0), _WIDE)
    # Descending parts are complemented.
    return int(f"{0 if dead else 1}{ratio:021d}{_WIDE - spent:020d}{SQLITE_INT_MAX - max(updated_at_ms, 0):019d}")


def utility_key(*, injected: int, useful: int, body_bytes: int, updated_at_ms: int, memory_id: str) -> str:
    rank = utility_rank(injected=injected, useful=useful, body_bytes=body_bytes, updated_at_ms=updated_at_ms)
    return ranked_utility_key(rank, memory_id)


def ranked_utility_key(rank: int, memory_id: str) -> str:
    # The id descends by complementing its bytes, and the "ff" terminator puts a longer id before
    # its own prefix, as a descending string order does.
    return f"{rank:061d}{bytes(255 - b for b in memory_id.encode('utf-8')).hex()}ff"


def split_utility_key(key: str) -> tuple[int, str]:
    """(rank, memory_id) of a key ``parse_utility_cursor`` accepted."""
    memory_id = bytes(255 - b for b in bytes.fromhex(key[61:-2])).decode("utf-8", errors="replace")
    return int(key[:61]), memory_id


def never_injected(rank: int) -> bool:
    """Never injected: no ratio, no bytes spent, so the utility order there is the records order."""
    return rank // 10**39 % 10**21 == _RATIO_NEVER


@dataclass(frozen=True, order=True)
class UtilityCursor:
    """A position in the utility order: the key of the last row shown."""

    key: str

    def encode(self) -> str:
        return UTILITY_CURSOR_PREFIX + self.key


def parse_utility_cursor(raw: Any) -> UtilityCursor | None:
    """``"u1.<key>"``; absent or blank means the first page, anything else is malformed."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str):
        raise InvalidParams("malformed cursor")
    key = raw.strip().removeprefix(UTILITY_CURSOR_PREFIX)
    digits, tail = key[:61], key[61:]
    if (
        not raw.strip().startswith(UTILITY_CURSOR_PREFIX)
        or not (digits.isascii() and digits.isdigit() and len(digits) == 61)
        or not tail.endswith("ff")
        or len(tail) % 2
        or any(c not in "0123456789abcdef" for c in tail)
    ):
        raise InvalidParams("malformed cursor: a utility cursor comes from a sort=utility page")
    return UtilityCursor(key)
