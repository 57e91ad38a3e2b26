"""Reading the audit log back as its readers do: ``GET /console/audit.ndjson``."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

AUDIT_NDJSON = "/console/audit.ndjson"
AUDIT_PAGE = "/console/audit/"


def audit_entries(client: Client, **filters: str) -> list[dict[str, Any]]:
    response = client.get(AUDIT_NDJSON, filters)
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"] == "application/x-ndjson"
    text = b"".join(response.streaming_content).decode()
    return [json.loads(line) for line in text.splitlines()]


def entries_for(entries: list[dict[str, Any]], action: str) -> list[dict[str, Any]]:
    return [entry for entry in entries if entry["action"] == action]
