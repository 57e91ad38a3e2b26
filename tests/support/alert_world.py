"""A scripted realm history for the alert tests: store-writer commits the realm watcher turns into
timeline events, on a clock set to now (alert windows are measured back from the present)."""

from __future__ import annotations

import time

from memory_panel.simulator.store_writer import StoreWriter, agent, batch, create_op, identity_scope, new_record
from mobkit_console.timeline.watcher import RealmWatcher
from tests.support.postures import LUKA
from tests.support.written import TAINT


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class ScriptedRealm:
    """One realm written through the store writer and followed by a RealmWatcher."""

    def __init__(self, writer: StoreWriter, realm: str = "default") -> None:
        self.writer = writer
        self.realm = realm
        writer.clock.set(wall_ms())
        self.watcher = RealmWatcher(broadcast=lambda rows: None)
        self.watcher.poll_once()  # marks the file's current end, as a follower's first poll does

    def quarantined_write(self, title: str, *, identity: str = LUKA) -> str:
        record = new_record(kind="fact", title=title, body=f"QUARANTINED BODY of {title}")
        op = create_op(identity_scope(self.realm, identity), record)
        written = self.writer.apply_batch(batch(realm=self.realm, author=agent(identity), ops=[op]), gate_reason=TAINT)
        return written.memory_ids[0]

    def remember(self, title: str, *, identity: str = LUKA) -> str:
        return self.writer.remember(identity_scope(self.realm, identity), title, f"body of {title}")

    def follow(self) -> int:
        """Put what was committed on the timeline; how many events."""
        return len(self.watcher.poll_once())
