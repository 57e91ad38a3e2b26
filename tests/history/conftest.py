"""The scripted history of tests/support/history.py, written into the test's agent-memory directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.history import Script, write_script


@pytest.fixture
def script(agent_memory_dir: Path) -> Script:
    return write_script(agent_memory_dir)
