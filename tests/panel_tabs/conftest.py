"""Holdings tiles, Knowledge, Pipeline and the utility sort: signed-in clients and the two read paths."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from tests.support.clients import local_part_user, signed_in_client
from tests.support.realm_guard import allow_realm_aliases


@pytest.fixture
def realm_aliases_allowed(db, monkeypatch, django_db_blocker) -> None:
    """Realm aliases past the guard ``db`` installs, for selectors called outside a client too."""
    allow_realm_aliases(monkeypatch, django_db_blocker)


@pytest.fixture
def client_for(realm_aliases_allowed) -> Callable[[str], Client]:
    """A Django test client signed in as the user whose subject (email) is ``subject``."""

    def make(subject: str = "demo@example.test") -> Client:
        return signed_in_client(local_part_user(subject))

    return make


@pytest.fixture(params=["direct", "index"])
def read_path(request, settings) -> str:
    """Run a test over the direct read and again with every realm indexed (built inline)."""
    if request.param == "index":
        settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
        settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    return request.param
