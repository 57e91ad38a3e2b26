"""``seed_demo``: the demo realms, written so every panel of the console has something real to show.

Everything goes through the store writer, so the files carry MobKit's exact write semantics. The
main realm tells the story in ``story.py``; a second, smaller realm (``team:blue`` by default)
needs percent-encoding in its file name; ``records`` pads the main realm with generated notes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memory_panel.services.demo.cast import DAY_MS, DEFAULT_REALM, SECOND_REALM
from memory_panel.services.demo.padding import pad
from memory_panel.services.demo.second_realm import write_second_realm
from memory_panel.services.demo.story import write_story
from memory_panel.services.store_writer import ManualClock, StoreWriter, realm_file, wall_clock_ms


@dataclass
class DemoSummary:
    """What was written, for the command's report and for tests."""

    realms: dict[str, Path] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)


def seed_demo(*, root: Path, realm: str = DEFAULT_REALM, records: int = 0,
              second_realm: str | None = SECOND_REALM, force: bool = False,
              start_ms: int | None = None,
              progress: Callable[[int], None] | None = None) -> DemoSummary:
    """Write the demo realm (and the second realm) under ``root``.

    Raises FileExistsError if a realm file exists and ``force`` is false; nothing is written then.
    ``records`` is the total record count wanted in the main realm (the story's records count);
    ``progress`` is called with the number of padding records written after each batch.
    """
    names = [realm] + ([second_realm] if second_realm and second_realm != realm else [])
    existing = [str(realm_file(name, root)) for name in names if realm_file(name, root).exists()]
    if existing and not force:
        raise FileExistsError(f"realm file already exists: {', '.join(existing)} (use --force)")
    summary = DemoSummary()
    # The story spans the last month, so ages in the panel read like a live deployment's.
    clock = ManualClock(start_ms if start_ms is not None else wall_clock_ms() - 30 * DAY_MS)
    with StoreWriter.create(realm, root=root, clock=clock, overwrite=force) as writer:
        summary.ids.update(write_story(writer, clock))
        story_count = _record_count(writer)
        if records > story_count:
            pad(writer, clock, records - story_count, progress)
        summary.realms[realm] = writer.path
        summary.records[realm] = _record_count(writer)
    if len(names) > 1:
        with StoreWriter.create(names[1], root=root, clock=clock, overwrite=force) as writer:
            write_second_realm(writer, clock)
            summary.realms[names[1]] = writer.path
            summary.records[names[1]] = _record_count(writer)
    return summary


def _record_count(writer: StoreWriter) -> int:
    return writer.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
