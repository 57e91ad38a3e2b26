"""Memory panel page fixtures: the panel realm, signed-in clients per subject (postures come from
tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.test import Client

from tests.support.clients import local_part_user, signed_in_client
from tests.support.realm_guard import allow_realm_aliases
from tests.support.worlds import PanelRealm, write_panel_realm


@pytest.fixture
def realm_aliases_allowed(db, monkeypatch, django_db_blocker) -> None:
    """Realm aliases past the guard ``db`` installs (so this fixture must come after ``db``)."""
    allow_realm_aliases(monkeypatch, django_db_blocker)


@pytest.fixture
def client_for(realm_aliases_allowed) -> Callable[[str], Client]:
    """A Django test client signed in as the user whose subject (email) is ``subject``."""

    def make(subject: str = "demo@example.test") -> Client:
        return signed_in_client(local_part_user(subject))

    return make


@pytest.fixture
def realm(agent_memory_dir: Path) -> PanelRealm:
    """The panel realm ``default`` (tests/support/worlds.py ``write_panel_realm``)."""
    return write_panel_realm(agent_memory_dir)
