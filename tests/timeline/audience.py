"""Events of every visibility class, and who receives which under TIMELINE_AUDIENCE (all surfaces)."""

from __future__ import annotations

from tests.support.sockets import envelope

VISIBILITY_EVENTS = {
    "luka": envelope("identity:luka", "memory.harvest.completed", identity="identity:luka", promoted=1, tombstoned=0),
    "mira": envelope("identity:mira", "memory.harvest.completed", identity="identity:mira", promoted=0, tombstoned=1),
    "system": envelope("_system", "memory.dream.started", run_id="dream-1"),
    "system-mob": envelope("_system", "memory.promotion.pending_gate", pending_id="gate-pending-000001",
                           record_id="mem-1", scope_kind="mob", scope_key="team"),
    "luka-scoped": envelope("identity:luka", "memory.record.remembered", record_id="mem-2",
                            scope_kind="identity", scope_key="identity:luka"),
    "system-luka-scoped": envelope("_system", "memory.write.quarantined", author='Agent { identity: "identity:luka" }',
                                   reason="llm_writes=quarantined policy", scope_kind="identity",
                                   scope_key="identity:luka"),
}

# Which of VISIBILITY_EVENTS each subject receives under POLICY, on every timeline surface.
VISIBLE_TO = [
    ("alice@example.test", set(VISIBILITY_EVENTS)),
    ("bob@example.test", {"luka", "luka-scoped"}),
    ("carol@example.test", {"luka", "mira", "system"}),
    ("dave@example.test", {"luka", "mira", "system", "system-mob"}),
    ("erin@example.test", set()),
]
