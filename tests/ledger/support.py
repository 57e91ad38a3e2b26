"""Fixtures shared by the ledger, recall and legacy-markdown tests (imported by their conftests).

- ``console`` → a Django test client signed in as ``reader@example.test``.
- ``rpc(method, params=None)`` → the response body of ``POST /console/rpc`` for that client.
- ``access_posture(text)`` → writes an access.toml with ``text`` and points the console at it.
- ``SCOPED`` is a posture granting reads on ``identity:scout`` only (no unscoped read).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

READER = "reader@example.test"

SCOPED = """
enabled = true
admins = ["root@example.test"]

[[rules]]
id = "scout-only"
subjects = ["*"]
actions = ["agent.view", "agent.memory.read"]
agents = ["identity:scout"]
"""

READER_EVERYWHERE = """
enabled = true
admins = ["root@example.test"]

[[rules]]
id = "everyone-reads"
actions = ["agent.view", "agent.memory.read"]
"""


@pytest.fixture
def console(db) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("reader", email=READER))
    return client


@pytest.fixture
def rpc(console: Client) -> Callable[..., dict[str, Any]]:
    def call(method: str, params: Any = None) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            body["params"] = params
        response = console.post("/console/rpc", json.dumps(body), content_type="application/json")
        assert response.status_code == 200, response.content
        return response.json()

    return call


@pytest.fixture
def access_posture(tmp_path: Path, settings) -> Callable[[str], Path]:
    path = tmp_path / "config" / "access.toml"
    path.parent.mkdir(exist_ok=True)

    def write(text: str) -> Path:
        path.write_text(text, encoding="utf-8")
        settings.MOBKIT_ACCESS_CONFIG = path
        return path

    return write
