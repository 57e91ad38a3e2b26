"""Ledger fixtures: a persistent_state directory and raw TCP servers for health checks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import RawServer


@pytest.fixture
def state_dir(tmp_path: Path, settings) -> Path:
    root = tmp_path / "state"
    root.mkdir()
    settings.MOBKIT_PERSISTENT_STATE = root
    return root


@pytest.fixture
def serve() -> Iterator:
    servers: list[RawServer] = []

    def start(reply: bytes) -> RawServer:
        servers.append(RawServer(reply))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
