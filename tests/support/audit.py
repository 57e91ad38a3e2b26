"""Reading the audit log back as its readers do: ``GET /console/audit.ndjson``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection
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


# A real write failure: the database itself refuses every new audit row while this is in force.
_REFUSE = {
    "sqlite": (
        "CREATE TEMP TRIGGER audit_refused BEFORE INSERT ON audit_auditentry"
        " BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    ),
    "postgresql": (
        "CREATE FUNCTION audit_refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$"
        " LANGUAGE plpgsql",
        "CREATE TRIGGER audit_refused BEFORE INSERT ON audit_auditentry FOR EACH ROW EXECUTE FUNCTION audit_refuse()",
    ),
}
_ALLOW = {
    "sqlite": ("DROP TRIGGER audit_refused",),
    "postgresql": ("DROP TRIGGER audit_refused ON audit_auditentry", "DROP FUNCTION audit_refuse()"),
}


@contextmanager
def audit_writes_refused() -> Iterator[None]:
    with connection.cursor() as cursor:
        for statement in _REFUSE[connection.vendor]:
            cursor.execute(statement)
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for statement in _ALLOW[connection.vendor]:
                cursor.execute(statement)
