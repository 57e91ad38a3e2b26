"""Shared fixtures: every realm a test reads is a real SQLite file written by the store writer."""

from __future__ import annotations

from inspect import getclosurevars
from pathlib import Path

import pytest
from django.db.backends.base.base import BaseDatabaseWrapper

from memory_panel.realms import REALM_ALIAS_PREFIX, forget_realm_connections

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


@pytest.fixture(autouse=True)
def _isolated_realm_connections(monkeypatch):
    # Realm aliases are registered lazily; dropping them after each test keeps Django's per-test
    # database guards from treating one test's realm as another test's forbidden database.
    # Within a test, Django's guard refuses any configured alias the test did not declare, and a
    # realm alias cannot be declared up front (it exists once the test has written the file), so
    # realm aliases (read-only files under tmp_path) skip that one guard. Its wrapper holds what it
    # wraps as `real_ensure_connection`; without a django_db test there is no guard to skip.
    guarded = BaseDatabaseWrapper.ensure_connection
    unguarded = getclosurevars(guarded).nonlocals.get("real_ensure_connection", guarded)

    def ensure_connection(self, *args, **kwargs):
        if self.alias.startswith(REALM_ALIAS_PREFIX):
            return unguarded(self, *args, **kwargs)
        return guarded(self, *args, **kwargs)

    monkeypatch.setattr(BaseDatabaseWrapper, "ensure_connection", ensure_connection)
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
