"""A real write failure of the console database, for any connection (a request's thread included)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


@contextmanager
def inserts_refused(table: str) -> Iterator[None]:
    """While in force, the database itself refuses every new row of ``table`` ("disk full").

    A trigger of the database, not a TEMP one: the write under test runs on another connection.
    """
    trigger = f"{table}_refused"
    if connection.vendor == "sqlite":
        refuse = [f"CREATE TRIGGER {trigger} BEFORE INSERT ON {table} BEGIN SELECT RAISE(ABORT, 'disk full'); END"]
        allow = [f"DROP TRIGGER {trigger}"]
    else:
        refuse = [f"CREATE FUNCTION {trigger}() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$"
                  " LANGUAGE plpgsql",
                  f"CREATE TRIGGER {trigger} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION {trigger}()"]
        allow = [f"DROP TRIGGER {trigger} ON {table}", f"DROP FUNCTION {trigger}()"]
    with connection.cursor() as cursor:
        for statement in refuse:
            cursor.execute(statement)
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for statement in allow:
                cursor.execute(statement)
