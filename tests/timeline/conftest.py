"""Timeline fixtures: real sockets against the real ASGI app, real access.toml files, real ingest.

The socket, ingest and envelope helpers are plain functions in tests/support/sockets.py.
"""

from __future__ import annotations

import pytest
from channels.layers import get_channel_layer

from tests.support.sockets import INGEST_TOKEN


@pytest.fixture(autouse=True)
async def _fresh_channel_layer():
    # The in-memory layer lives as long as the process: start each test with no stale group members.
    layer = get_channel_layer()
    await layer.flush()
    yield
    await layer.flush()


@pytest.fixture
def ingest_token(settings) -> str:
    settings.MOBKIT_INGEST_TOKEN = INGEST_TOKEN
    return INGEST_TOKEN


@pytest.fixture
def access_toml_atomic() -> bool:
    # An operator's editor renames a new file over access.toml: a new inode, which the config
    # watcher sees at once.
    return True
