"""Fixtures that build real realm files with the store writer (registered via tests/conftest.py).

- ``realm_writer(name, format="current")`` → a ``StoreWriter`` on a fresh realm file in
  ``agent_memory_dir``. Its clock is ``realm_writer.clock`` (a ``ManualClock`` every writer of the
  test shares): call ``.advance(ms)`` between writes, or leave it still to make updated_at_ms tie.
- ``demo_realms`` → the ``DemoSummary`` of ``seed_demo`` written into ``agent_memory_dir``
  (realms ``default`` and ``team:blue``; ``demo_realms.ids`` names the story's records).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_panel.services.demo import DemoSummary, seed_demo
from memory_panel.services.store_writer import ManualClock, StoreWriter


class RealmWriterFactory:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = ManualClock()
        self.writers: list[StoreWriter] = []

    def __call__(self, name: str = "default", *, format: str = "current") -> StoreWriter:
        writer = StoreWriter.create(name, root=self.root, format=format, clock=self.clock)
        self.writers.append(writer)
        return writer

    def close(self) -> None:
        for writer in self.writers:
            writer.close()


@pytest.fixture
def realm_writer(agent_memory_dir: Path) -> Iterator[RealmWriterFactory]:
    factory = RealmWriterFactory(agent_memory_dir)
    yield factory
    factory.close()


@pytest.fixture
def demo_realms(agent_memory_dir: Path) -> DemoSummary:
    return seed_demo(root=agent_memory_dir)
