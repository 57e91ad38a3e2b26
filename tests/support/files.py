"""Files MobKit writes beside the realms: ledger state (docs/runtime-surfaces.md §1.5–1.6) and
legacy markdown memory awaiting import (docs/runtime-surfaces.md §3.1–3.2).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memory_panel.store.legacy_markdown import LegacyRecord, render_markdown
from memory_panel.store.realms import encode_path_segment


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


def write_md(root: Path, realm: str, identity: str, records: list[LegacyRecord], suffix: str = ".md") -> Path:
    """One identity's legacy markdown file under ``root/<encoded realm>/``, as MobKit names it."""
    folder = root / encode_path_segment(realm)
    folder.mkdir(exist_ok=True)
    path = folder / f"{encode_path_segment(identity)}{suffix}"
    path.write_text(render_markdown(records), encoding="utf-8")
    return path
