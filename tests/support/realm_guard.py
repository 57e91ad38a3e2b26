"""Letting the read-only realm aliases past pytest-django's test-database guard."""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

from memory_panel.store.realms import REALM_ALIAS_PREFIX


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
