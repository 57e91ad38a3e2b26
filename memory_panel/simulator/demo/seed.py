"""``seed_demo``: the demo realms, written so every panel of the console has something real to show.

Everything goes through the store writer, so the files carry MobKit's exact write semantics. The
main realm tells the story in ``story.py``; a second, smaller realm (``team:blue`` by default)
needs percent-encoding in its file name; ``records`` pads the main realm with generated notes.
Each realm file is stamped as a demo realm (``marker.py``), so ``demo_activity`` may write to it
later. Beside the main realm goes a legacy markdown file awaiting import, and, when asked, the
operational ledger's state file: no page of the console is empty.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memory_panel.simulator.demo.cast import DAY_MS, DEFAULT_REALM, SECOND_REALM
from memory_panel.simulator.demo.ledger import write_demo_ledger
from memory_panel.simulator.demo.legacy import legacy_markdown_path, write_legacy_markdown
from memory_panel.simulator.demo.marker import mark_demo_realm
from memory_panel.simulator.demo.padding import pad
from memory_panel.simulator.demo.second_realm import write_second_realm
from memory_panel.simulator.demo.story import write_story
from memory_panel.simulator.store_writer import ManualClock, StoreWriter, realm_file, wall_clock_ms


STORY_SPAN_DAYS = 28


@dataclass
class DemoSummary:
    """What was written, for the command's report and for tests."""

    realms: dict[str, Path] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    legacy_files: list[Path] = field(default_factory=list)
    ledger: Path | None = None  # the ledger state file written, None when one was already there


def seed_demo(*, root: Path, realm: str = DEFAULT_REALM, records: int = 0,
              second_realm: str | None = SECOND_REALM, force: bool = False,
              start_ms: int | None = None, ledger_dir: Path | None = None,
              progress: Callable[[int], None] | None = None) -> DemoSummary:
    """Write the demo realm (and the second realm, unless ``second_realm`` is None) under ``root``.

    Raises FileExistsError if a realm file or the legacy markdown file exists and ``force`` is
    false; nothing is written then. ``records`` is the total record count wanted in the main realm
    (the story's records count); ``progress`` is called with the number of padding records written
    after each batch. ``ledger_dir`` (MobKit's persistent_state) gets the ledger state file if it
    has none yet.
    """
    names = [realm] + ([second_realm] if second_realm and second_realm != realm else [])
    paths = [realm_file(name, root) for name in names] + [legacy_markdown_path(root, realm)]
    existing = [str(path) for path in paths if path.exists()]
    if existing and not force:
        raise FileExistsError(f"realm file already exists: {', '.join(existing)} (use --force)")
    summary = DemoSummary()
    # The story spans the last four weeks, so ages in the panel read like a live deployment's; it
    # starts inside the timeline's default 30-day retention, so its history stays on the timeline.
    now_ms = wall_clock_ms()
    clock = ManualClock(start_ms if start_ms is not None else now_ms - STORY_SPAN_DAYS * DAY_MS)
    with StoreWriter.create(realm, root=root, clock=clock, overwrite=force) as writer:
        mark_demo_realm(writer)
        summary.ids.update(write_story(writer, clock))
        story_count = _record_count(writer)
        if records > story_count:
            pad(writer, clock, records - story_count, progress)
        summary.realms[realm] = writer.path
        summary.records[realm] = _record_count(writer)
    if len(names) > 1:
        with StoreWriter.create(names[1], root=root, clock=clock, overwrite=force) as writer:
            mark_demo_realm(writer)
            write_second_realm(writer, clock)
            summary.realms[names[1]] = writer.path
            summary.records[names[1]] = _record_count(writer)
    summary.legacy_files.append(write_legacy_markdown(root, realm, now_ms=now_ms))
    if ledger_dir is not None:
        summary.ledger = write_demo_ledger(ledger_dir, now_ms=now_ms)
    return summary


def _record_count(writer: StoreWriter) -> int:
    return writer.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
