"""Memory panel page fixtures: signed-in clients per subject, access.toml postures, hostile records."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.conftest import allow_realm_aliases
from tests.views.postures import write_posture


@pytest.fixture
def realm_aliases_allowed(db, monkeypatch, django_db_blocker) -> None:
    """Realm aliases past the guard ``db`` installs (so this fixture must come after ``db``)."""
    allow_realm_aliases(monkeypatch, django_db_blocker)


@pytest.fixture
def client_for(realm_aliases_allowed) -> Callable[[str], Client]:
    """A Django test client signed in as the user whose subject (email) is ``subject``."""

    def make(subject: str = "demo@example.test") -> Client:
        user, _ = get_user_model().objects.get_or_create(username=subject.split("@")[0], defaults={"email": subject})
        client = Client()
        client.force_login(user)
        return client

    return make


@pytest.fixture
def posture(tmp_path: Path, settings) -> Callable[[str], Path]:
    """Point MOBKIT_ACCESS_CONFIG at a real access.toml holding one of the postures by name."""

    def use(name: str) -> Path:
        path = write_posture(tmp_path / "config", name)
        settings.MOBKIT_ACCESS_CONFIG = path
        return path

    return use
