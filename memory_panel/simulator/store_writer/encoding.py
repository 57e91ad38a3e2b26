"""MobKit's encodings: compact JSON, content hashes, FNV-1a, ids and tokens, tags, usage stats.

Every function here must produce the bytes the MobKit runtime writes (docs/store-format.md §2, §4.4).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import threading
import time
from collections.abc import Iterable
from typing import Any

from memory_panel.simulator.store_writer.errors import StoreWriteError
from memory_panel.simulator.store_writer.limits import TAG_MAX_BYTES, TAGS_MAX_ENTRIES

_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
_U64 = (1 << 64) - 1


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


# UsageEvent → (counter, timestamp) in usage_stats, in MobKit's key order (§2).
USAGE_FIELDS = {
    "injected": ("injected_count", "last_injected_at_ms"),
    "explicit_recall": ("explicit_recall_count", "last_recalled_at_ms"),
    "judged_useful": ("judged_useful_count", "last_useful_at_ms"),
}


def usage_stats_json(stats: dict[str, Any]) -> str:
    """usage_stats in MobKit's key order, null timestamps omitted (§2)."""
    ordered: dict[str, Any] = {}
    for count, last in USAGE_FIELDS.values():
        ordered[count] = int(stats.get(count) or 0)
        if stats.get(last) is not None:
            ordered[last] = stats[last]
    return to_json(ordered)


EMPTY_USAGE = usage_stats_json({})
