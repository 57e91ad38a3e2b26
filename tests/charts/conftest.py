"""Chart fixtures: the realm written on known days, and signed-in clients."""

from __future__ import annotations

import pytest

from tests.support.clients import local_part_user, signed_in_client
from tests.support.dated_realm import Account, write_dated_realm
from tests.support.realm_guard import allow_realm_aliases


@pytest.fixture
def dated_realm(realm_writer) -> Account:
    return write_dated_realm(realm_writer)


@pytest.fixture
def client_for(db, monkeypatch, django_db_blocker):
    """A test client signed in as ``subject``, past the guard ``db`` installs on realm aliases."""
    allow_realm_aliases(monkeypatch, django_db_blocker)
    return lambda subject: signed_in_client(local_part_user(subject))
