"""Memory panel page fixtures: signed-in clients per subject, access.toml postures, hostile records."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import Client

from memory_panel.realms import REALM_ALIAS_PREFIX

from tests.views.postures import write_posture


@pytest.fixture
def realm_aliases_allowed(db, monkeypatch, django_db_blocker) -> None:
    """Let the read-only realm aliases connect inside a django_db test.

    Django's per-test guard (installed by ``db``, so this must run after it) refuses aliases the
    test did not declare, and realm aliases appear lazily, one per file. They open ``mode=ro``, so
    letting them through cannot break the test database's isolation.
    """
    guarded = BaseDatabaseWrapper.ensure_connection
    real = django_db_blocker._real_ensure_connection

    def ensure_connection(self, *args, **kwargs):
        if self.alias.startswith(REALM_ALIAS_PREFIX):
            return real(self, *args, **kwargs)
        return guarded(self, *args, **kwargs)

    monkeypatch.setattr(BaseDatabaseWrapper, "ensure_connection", ensure_connection)


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
