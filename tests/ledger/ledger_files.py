"""Ledger state files as MobKit writes them (docs/runtime-surfaces.md §1.5–1.6)."""

from __future__ import annotations

import json
import os
from pathlib import Path


def assertion(n: int, entity: str, topic: str, store: str, fact: str, metadata=None) -> dict:
    return {
        "assertion_id": f"memory-assert-{n:06d}",
        "entity": entity,
        "topic": topic,
        "store": store,
        "fact": fact,
        "metadata": metadata,
        "indexed_at_ms": 1_700_000_000_000 + n,
    }


def conflict(entity: str, topic: str, store: str, reason, updated: int = 1_700_000_100_000) -> dict:
    return {"entity": entity, "topic": topic, "store": store, "reason": reason, "updated_at_ms": updated}


def write_state(path: Path, document) -> None:
    """As MobKit persists: pretty JSON to ``<stem>.tmp``, then a rename over the state file."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(document, indent=2), encoding="utf-8")
    os.replace(tmp, path)
