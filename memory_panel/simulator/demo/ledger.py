"""The demo's operational ledger: a state file as MobKit's local_json backend persists it.

docs/runtime-surfaces.md §1.6: ``{"assertions":[…],"conflicts":[…]}``, pretty JSON with a 2-space
indent, written to ``memory-ledger-state.tmp`` and renamed over ``memory-ledger-state.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memory_panel.simulator.demo.cast import DAY_MS
from memory_panel.selectors.ledger import LEGACY_STATE_FILE_NAME, STATE_FILE_NAME

# (entity, topic, store, fact, metadata), oldest first; names are canonical (trimmed, lowercase).
_ASSERTIONS: tuple[tuple[str, str, str, str, dict[str, Any] | None], ...] = (
    ("booking-api", "rate-limit", "knowledge_graph", "The booking API allows 120 requests per minute per key.",
     {"source": "vendor docs"}),
    ("booking-api", "key-rotation", "todo", "Rotate the booking API key before the quarter starts.", None),
    ("berlin-offsite", "venue", "timeline", "Offsite venue confirmed: the Mitte office, third floor.", None),
    ("berlin-offsite", "dates", "timeline", "The Berlin offsite runs from Tuesday to Thursday in week 20.",
     {"confirmed_by": "maria@example.com"}),
    ("lisbon-office", "address", "knowledge_graph", "The Lisbon office is at Avenida da Liberdade 110.",
     {"verified_by": "facilities"}),
    ("expense-run", "deadline", "top_of_mind", "The expense batch locks at 18:00 CET on the 25th.", None),
    ("identity:luka", "seat-preference", "vector", "Aisle under four hours, window on long-haul.", None),
    ("deploy-freeze", "friday", "knowledge_graph",
     "No deploys after 14:00 on Fridays; security hotfixes need the on-call's sign-off.", None),
    ("oncall", "handover", "todo", "Write the Monday hand-over note in #ops-handover before 10:00.", None),
    ("zurich-per-diem", "contractors", "knowledge_graph", "The Zurich per-diem cap applies to contractors.",
     {"source": "travel handbook §4"}),
    ("lisbon-office", "address", "vector", "Booking tool still shows the old Alcântara address.", None),
)
# (entity, topic, store, reason): a conflict signal per key, kept in (entity, topic, store) order.
_CONFLICTS = (
    ("lisbon-office", "address", "knowledge_graph", "the booking tool still lists the old Alcântara address"),
    ("zurich-per-diem", "contractors", "knowledge_graph", "a forum post claims the cap no longer applies"),
)


def ledger_document(now_ms: int) -> dict[str, Any]:
    """Assertions a few hours apart over the last fortnight, and two live conflict signals."""
    start = now_ms - 14 * DAY_MS
    step = (14 * DAY_MS) // len(_ASSERTIONS)
    assertions = [
        {"assertion_id": f"memory-assert-{n:06d}", "entity": entity, "topic": topic, "store": store,
         "fact": fact, "metadata": metadata, "indexed_at_ms": start + n * step}
        for n, (entity, topic, store, fact, metadata) in enumerate(_ASSERTIONS)
    ]
    conflicts = [
        {"entity": entity, "topic": topic, "store": store, "reason": reason,
         "updated_at_ms": now_ms - (2 - n) * DAY_MS}
        for n, (entity, topic, store, reason) in enumerate(sorted(_CONFLICTS))
    ]
    return {"assertions": assertions, "conflicts": conflicts}


def write_demo_ledger(persistent_state: Path, *, now_ms: int) -> Path | None:
    """Write the demo ledger unless a ledger file is already there; returns the path written.

    An existing file (or the legacy ``elephant-memory-state.json`` MobKit would adopt) belongs to
    whoever wrote it, so it is never replaced, not even by ``seed_demo --force``.
    """
    path = persistent_state / STATE_FILE_NAME
    if path.exists() or (persistent_state / LEGACY_STATE_FILE_NAME).exists():
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(ledger_document(now_ms), indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path
