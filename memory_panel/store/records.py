"""Typed values decoded from the TEXT columns of a ``records`` row (docs/store-format.md §2–§3).

The store invites hand edits, so every JSON column decodes defensively: a value that does not
parse, or parses to the wrong shape, becomes the column's default and the column's name is added
to ``malformed`` — a bad row is shown as flagged, never a 500. Text columns likewise: a BLOB, a
number, a NULL where MobKit writes text, or TEXT that is not valid UTF-8 (each bad byte shown as
U+FFFD) is shown as text and flagged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from memory_panel.store.realms import ReplacedText

SCOPE_KINDS = ("identity", "mob", "operator", "realm")
SCOPE_ORDER = {kind: index for index, kind in enumerate(SCOPE_KINDS)}
STATUS_KINDS = ("active", "quarantined", "superseded", "tombstoned")
MEMORY_KINDS = ("preference", "fact", "gotcha", "procedure", "relationship", "open_loop", "reference")
TRUST_TIERS = ("untrusted", "agent_observed", "agent_verified", "application", "operator")
# MemoryAuthor's tags (docs/store-format.md §3), then what ``_decode_provenance`` reads when the
# provenance names none: the author kinds the Records page filters and counts by.
AUTHOR_KINDS = ("operator", "application", "agent", "steward", "distiller", "unknown")
USAGE_KEYS = (
    ("injected_count", "last_injected_at_ms"),
    ("explicit_recall_count", "last_recalled_at_ms"),
    ("judged_useful_count", "last_useful_at_ms"),
)

# The columns every reader selects, in table order; ever_quarantined only where the file has it.
RECORD_COLUMNS = (
    "memory_id", "scope_kind", "scope_key", "kind", "title", "description", "body", "tags",
    "provenance", "trust", "status_kind", "status_detail", "supersedes", "derived_from",
    "working_set_rank", "content_hash", "created_at_ms", "updated_at_ms", "usage_stats",
)
LIST_COLUMNS = tuple(c for c in RECORD_COLUMNS if c != "body")


def author_kind_sql(provenance: str) -> str:
    """The record's author kind as ``_decode_provenance`` reads it, as SQL on the ``provenance`` column
    named: its ``author.author``, or "unknown" when the provenance is not an object holding one."""
    return (
        f"CASE WHEN json_valid({provenance}) AND json_type({provenance}, '$.author') = 'object'"
        f" AND json_type({provenance}, '$.author.author') IS NOT NULL"
        f" THEN json_extract({provenance}, '$.author.author') ELSE 'unknown' END"
    )


AUTHOR_KIND = author_kind_sql("r.provenance")


def author_code_sql(kind: str) -> str:
    """An author kind (SQL, as ``AUTHOR_KIND``) as the indexes keep it, a small integer
    (``author_code``); 0 for a text no MemoryAuthor has (a hand edit), which no filter asks for."""
    cases = " ".join(f"WHEN '{name}' THEN {author_code(name)}" for name in AUTHOR_KINDS)
    return f"CASE {kind} {cases} ELSE 0 END"


def author_code(kind: str) -> int:
    return AUTHOR_KINDS.index(kind) + 1


@dataclass(frozen=True)
class MemoryRecord:
    realm: str
    id: str
    scope_kind: str
    scope_key: str
    kind: str
    title: str
    description: str
    tags: list[str]
    provenance: dict[str, Any]
    trust: str
    status: str
    status_detail: str | None
    supersedes: str | None
    derived_from: list[str]
    working_set_rank: int | None
    content_hash: str
    created_at_ms: int
    updated_at_ms: int
    usage: dict[str, int]
    ever_quarantined: bool
    body_bytes: int
    body: str | None = None  # None on list rows: bodies are read only for one record
    malformed: tuple[str, ...] = field(default=())

    @property
    def scope(self) -> dict[str, str]:
        return scope_json(self.realm, self.scope_kind, self.scope_key)

    @property
    def author(self) -> dict[str, Any]:
        return self.provenance.get("author", {})

    @property
    def evidence(self) -> list[dict[str, Any]]:
        return self.provenance.get("evidence", [])

    @property
    def verification(self) -> dict[str, Any] | None:
        return self.provenance.get("verification")


def scope_json(realm: str, kind: str, key: str) -> dict[str, str]:
    """MemoryScope's wire shape (tag ``scope``); the realm scope carries no key."""
    if kind == "realm":
        return {"scope": "realm", "realm": realm}
    if kind in SCOPE_KINDS:
        return {"scope": kind, "realm": realm, kind: key}
    return {"scope": kind, "realm": realm, "key": key}


def decode_record(realm: str, row: dict[str, Any]) -> MemoryRecord:
    """A record from one row dict (``body`` optional; ``body_bytes`` required when it is absent)."""
    malformed: list[str] = []
    bad = malformed.append
    get = row.get

    def text(column: str, *, nullable: bool = False) -> str | None:
        value = get(column)
        # Every well-formed row takes the first branch (a ReplacedText is a str subclass, not str).
        return value if type(value) is str else _text_column(row, column, bad=bad, nullable=nullable)

    for column in ("tags", "provenance", "derived_from", "usage_stats"):
        if type(get(column)) is ReplacedText:
            bad(column)  # parsed as far as it goes; the bytes that were not UTF-8 are lost
    scope_kind = text("scope_kind")
    if scope_kind not in SCOPE_KINDS and "scope_kind" not in malformed:
        bad("scope_kind")
    tags = _json_column(row.get("tags"), list, "tags", bad)
    if not all(isinstance(tag, str) for tag in tags):
        tags, _ = [], bad("tags")
    derived = _json_column(row.get("derived_from"), list, "derived_from", bad)
    if not all(isinstance(item, str) for item in derived):
        derived, _ = [], bad("derived_from")
    provenance = _decode_provenance(row.get("provenance"), bad)
    usage = _decode_usage(row.get("usage_stats"), bad)
    status_kind = text("status_kind")
    status = status_kind if status_kind in STATUS_KINDS else "active"  # docs/store-format.md §3
    body = text("body", nullable=True) if "body" in row else None
    # The stored bytes when the row says (a body that is not UTF-8 counts what the file holds).
    body_bytes = _int_value(row.get("body_bytes"), 0) if "body_bytes" in row or body is None else len(body.encode("utf-8"))
    return MemoryRecord(
        realm=realm,
        id=text("memory_id"),
        scope_kind=scope_kind,
        scope_key=text("scope_key"),
        kind=text("kind"),
        title=text("title"),
        description=text("description", nullable=True) or "",
        tags=tags,
        provenance=provenance,
        trust=text("trust"),
        status=status,
        status_detail=text("status_detail", nullable=True),
        supersedes=text("supersedes", nullable=True),
        derived_from=derived,
        working_set_rank=_int_column(row, "working_set_rank", bad, default=None),
        content_hash=text("content_hash", nullable=True) or "",
        created_at_ms=_int_column(row, "created_at_ms", bad, default=0),
        updated_at_ms=_int_column(row, "updated_at_ms", bad, default=0),
        usage=usage,
        ever_quarantined=bool(row.get("ever_quarantined") or 0),
        body_bytes=body_bytes,
        body=body,
        malformed=tuple(malformed),
    )


def parse_json_text(text: Any) -> Any:
    """JSON from a TEXT column, or None when it is not valid JSON."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _text_column(row: dict[str, Any], column: str, *, bad, nullable: bool = False) -> str | None:
    """A TEXT column as str; anything else a hand edit can leave there is shown as text and flagged."""
    value = row.get(column)
    if isinstance(value, str) and not isinstance(value, ReplacedText):
        return value
    if value is None and nullable:
        return None
    bad(column)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return "" if value is None else str(value)


def _int_value(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _int_column(row: dict[str, Any], column: str, bad, *, default: int | None) -> int | None:
    # SQLite lets an INTEGER column hold text; a hand edit there must not take the page down.
    value = row.get(column)
    if value is None and default is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:  # MobKit's are u64 / u32
        return value
    bad(column)
    return default


def _json_column(text: Any, expected: type, column: str, bad) -> Any:
    value = parse_json_text(text)
    if isinstance(value, expected):
        return value
    bad(column)
    return expected()


def _decode_provenance(text: Any, bad) -> dict[str, Any]:
    value = parse_json_text(text)
    author = value.get("author") if isinstance(value, dict) else None
    if not isinstance(value, dict) or not isinstance(author, dict) or "author" not in author:
        bad("provenance")
        return {"evidence": [], "author": {"author": "unknown"}}
    evidence = value.get("evidence", [])  # docs/store-format.md §2: readers accept a missing evidence list
    if not isinstance(evidence, list) or not all(isinstance(ref, dict) for ref in evidence):
        bad("provenance")
        evidence = []
    decoded = {"evidence": evidence, "author": author}
    for optional in ("profile", "verification"):
        if isinstance(value.get(optional), dict):
            decoded[optional] = value[optional]
    return decoded


def _decode_usage(text: Any, bad) -> dict[str, int]:
    value = parse_json_text(text)
    if not isinstance(value, dict):
        bad("usage_stats")  # docs/store-format.md §2: bad JSON reads as the default counters
        value = {}
    usage: dict[str, int] = {}
    for count_key, last_key in USAGE_KEYS:
        count = value.get(count_key, 0)
        usage[count_key] = count if isinstance(count, int) and not isinstance(count, bool) else 0
        if isinstance(value.get(last_key), int):
            usage[last_key] = value[last_key]
    return usage
