"""Shared fixtures: every realm a test reads is a real SQLite file written by the store writer."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db.backends.base.base import BaseDatabaseWrapper

from memory_panel.store.realms import REALM_ALIAS_PREFIX, forget_realm_connections

pytest_plugins = ["tests.fixtures_store"]


def pytest_sessionstart(session) -> None:
    from django.core.management import call_command
    from django.test.utils import override_settings

    # Servers the suite starts as subprocesses (daphne) run the production settings, whose
    # manifest storage needs collected files; pages rendered in this process keep plain names,
    # because the live_server fixture serves /static/ from the finders, which know no hashes.
    call_command("collectstatic", interactive=False, verbosity=0)
    override_settings(
        STORAGES={
            "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
        }
    ).enable()


def allow_realm_aliases(monkeypatch, django_db_blocker) -> None:
    """Let realm aliases connect past the test-database guard; every other alias stays guarded.

    The guard refuses any alias a test did not declare, and a realm alias cannot be declared up
    front: it exists once the test has written its file. Realm aliases open read-only files under
    tmp_path, so letting them through cannot break the test database's isolation. Call it after
    the ``db`` / ``transactional_db`` fixture has installed the guard it wraps.
    """
    guarded = BaseDatabaseWrapper.ensure_connection
    real = django_db_blocker._real_ensure_connection

    def ensure_connection(self, *args, **kwargs):
        if self.alias.startswith(REALM_ALIAS_PREFIX):
            return real(self, *args, **kwargs)
        return guarded(self, *args, **kwargs)

    monkeypatch.setattr(BaseDatabaseWrapper, "ensure_connection", ensure_connection)


@pytest.fixture(autouse=True)
def _isolated_realm_connections(monkeypatch, django_db_blocker):
    # Realm aliases are registered lazily; dropping them after each test keeps one test's realm
    # from becoming another test's undeclared database.
    allow_realm_aliases(monkeypatch, django_db_blocker)
    yield
    forget_realm_connections()


@pytest.fixture
def agent_memory_dir(tmp_path: Path, settings) -> Path:
    """An empty agent-memory directory the console is pointed at for this test."""
    root = tmp_path / "state" / "agent-memory"
    root.mkdir(parents=True)
    settings.MOBKIT_PERSISTENT_STATE = tmp_path / "state"
    settings.MOBKIT_AGENT_MEMORY_ROOT = root
    return root
