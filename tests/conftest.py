"""Shared fixtures: every realm a test reads is a real SQLite file written by the store writer."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_panel.realms import forget_realm_connections


@pytest.fixture(autouse=True)
def _isolated_realm_connections():
    # Realm aliases are registered lazily; dropping them after each test keeps Django's per-test
    # database guards from treating one test's realm as another test's forbidden database.
    yield
    forget_realm_connections()


@pytest.fixture
def agent_memory_dir(tmp_path: Path, settings) -> Path:
    """An empty agent-memory directory the console is pointed at for this test."""
    root = tmp_path / "state" / "agent-memory"
    root.mkdir(parents=True)
    settings.MOBKIT_PERSISTENT_STATE = tmp_path / "state"
    settings.MOBKIT_AGENT_MEMORY_ROOT = root
    return root
