"""The timeline's vocabulary: which event types exist and how the page ranks them.

MobKit's seventeen ``memory.*`` types come from docs/timeline.md §3.2 and
docs/store-format.md §6. The three ``memory.record.*`` lifecycle types below them are the console's own: MobKit's
architecture doc (§9.3) asks for remember/update/forget on the timeline but its sink emits none,
so the realm watcher reports them from the audit table.
"""

from __future__ import annotations

from typing import Any

MOBKIT_EVENT_TYPES = (
    "memory.dream.started",
    "memory.dream.completed",
    "memory.dream.skipped",
    "memory.record.promoted",
    "memory.quarantine.verdict",
    "memory.quarantine.release_blocked",
    "memory.conflict.signal",
    "memory.write.quarantined",
    "memory.taint.transition",
    "memory.budget.denied",
    "memory.promotion.pending_gate",
    "memory.harvest.completed",
    "memory.distill.timed_out",
    "memory.hygiene.proposed",
    "memory.hygiene.applied",
    "memory.hygiene.blocked",
    "memory.hygiene.skipped",
)
CONSOLE_EVENT_TYPES = (
    "memory.record.remembered",
    "memory.record.updated",
    "memory.record.forgotten",
)
EVENT_TYPES = MOBKIT_EVENT_TYPES + CONSOLE_EVENT_TYPES

SYSTEM_IDENTITY = "_system"  # docs/timeline.md §3.1: realm-level events carry this reserved identity

# The client's Signals rail (docs/timeline.md §3.2): these stand out; taint only when a session became tainted.
_WARNING_TYPES = frozenset(
    {
        "memory.write.quarantined",
        "memory.budget.denied",
        "memory.hygiene.blocked",
        "memory.quarantine.release_blocked",
        "memory.conflict.signal",
    }
)


def is_warning(event_type: str, data: dict[str, Any]) -> bool:
    if event_type == "memory.taint.transition":
        return data.get("kind") == "tainted"
    return event_type in _WARNING_TYPES


def record_link(data: dict[str, Any]) -> tuple[str, str] | None:
    """(record id, realm) when the event is about one record the biography page can show."""
    record_id, realm = data.get("record_id"), data.get("realm")
    if isinstance(record_id, str) and record_id and isinstance(realm, str) and realm:
        # A steward direct accept names the proposal id as record_id (docs/store-format.md §6): no biography.
        if not record_id.startswith("prop-"):
            return record_id, realm
    return None
