"""Helpers of the hardening tests: damaging a realm file in place, and calling the endpoint."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from memory_panel.store.realms import forget_realm_connections

# Every all-realm page and method that reads realm files.
HTML_PAGES = (
    "/console/memory/",
    "/console/memory/records/",
    "/console/memory/quarantine/",
    "/console/memory/dreams/",
)
PANEL_METHODS = (
    "mobkit/memory/panel/records",
    "mobkit/memory/panel/quarantine",
    "mobkit/memory/panel/overview",
    "mobkit/memory/panel/dreams",
    "mobkit/memory/panel/proposals",
    "mobkit/memory/panel/injections",
    "mobkit/memory/panel/harvests",
    "mobkit/memory/panel/dream_runs",
    "mobkit/memory/panel/audit_verdicts",
)


def damage(path: Path, how: str) -> None:
    """Damage a realm file in place (same inode), as a bad disk, a bad copy or a stray write would."""
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        if how == "truncated":
            handle.truncate(0)
        elif how == "halved":
            handle.truncate(size // 2)
        elif how == "garbage":
            handle.write(os.urandom(size))
        else:
            raise ValueError(how)
    # A server opens a fresh connection per request; the test client keeps them across requests,
    # and a kept connection may go on serving pages it cached before the damage.
    forget_realm_connections()


def rpc(client, method: str, params: dict[str, Any], *, request_id: int = 1) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    reply = client.post("/console/rpc", json.dumps(body), content_type="application/json")
    assert reply.status_code == 200, (method, reply.status_code, reply.content[:300])
    assert reply["Content-Type"] == "application/json"
    return reply.json()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
