"""The machine's PostgreSQL (``DATABASE_URL``, as .ci/run sets it) for tests that run a deployment on
it: why it cannot be used here, and a database of a test's own on it."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import psycopg

POSTGRES_URL = os.environ.get("DATABASE_URL", "")


def postgres_missing() -> str | None:
    """Why the tests cannot reach PostgreSQL at DATABASE_URL, or None when they can."""
    if not POSTGRES_URL.startswith(("postgres://", "postgresql://")):
        return "DATABASE_URL names no PostgreSQL server (.ci/run sets it to the machine's)"
    try:
        psycopg.connect(POSTGRES_URL, connect_timeout=2).close()
    except psycopg.Error as error:
        return f"PostgreSQL at DATABASE_URL is unreachable ({error})"
    return None


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A database of this test's own on the DATABASE_URL server (its URL), dropped afterwards."""
    name = f"mobkit_serve_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlsplit(POSTGRES_URL)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
