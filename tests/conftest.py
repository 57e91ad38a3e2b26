"""Shared fixtures: every realm a test reads is a real SQLite file written by the store writer.

Fixtures only; what they build comes from tests/support (plain modules every test may import).

- ``agent_memory_dir`` → an empty agent-memory directory the console is pointed at.
- ``realm_writer(name, format="current")`` → a ``StoreWriter`` on a fresh realm file in
  ``agent_memory_dir``. Its clock is ``realm_writer.clock`` (a ``ManualClock`` every writer of the
  test shares): call ``.advance(ms)`` between writes, or leave it still to make updated_at_ms tie.
- ``demo_realms`` → the ``DemoSummary`` of ``seed_demo`` written into ``agent_memory_dir``
  (realms ``default`` and ``team:blue``; ``demo_realms.ids`` names the story's records).
- ``world`` → the RPC world of tests/support/worlds.py, written once per module.
- ``access_toml(text)`` → writes access.toml (in place, or renamed over it where a directory's
  ``access_toml_atomic`` says so) and points the console at it.
- ``posture(name)`` → the same for a posture of ``tests.support.postures.BY_NAME``.
- ``as_caller(text, subject, superuser=False)`` → an access.toml text (None: none) and a client
  signed in as ``subject``, a console admin when ``superuser``.
- ``console`` / ``rpc(method, params=None)`` → a client signed in as ``reader@example.test`` and
  the JSON-RPC response body of a call it makes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import SyncToAsync
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client

from memory_panel.simulator.demo import DemoSummary, seed_demo
from memory_panel.store.realms import close_realm_connections, forget_realm_connections
from mobkit_console.audit import services as audit_services
from tests.support.oidc import AUDIENCE, CLIENT_ID, CLIENT_SECRET, LoopbackIssuer
from tests.support.clients import local_part_user, signed_in_client, user_with_subject
from tests.support.postures import BY_NAME, READER, USER, write_access_toml
from tests.support.realm_guard import allow_realm_aliases
from tests.support.rpc import call_ok
from tests.support.worlds import RealmWriterFactory, World, build_world


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


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup):
    yield
    # Async tests reach the database through asgiref's one shared sync thread (channels'
    # database_sync_to_async), whose connection outlives them: closed here, before the test
    # database is dropped, or PostgreSQL refuses to drop a database another session uses.
    SyncToAsync.single_thread_executor.submit(connections.close_all).result()


@pytest.fixture(autouse=True)
def _isolated_realm_connections(monkeypatch, django_db_blocker):
    # Realm aliases are registered lazily; dropping them after each test keeps one test's realm
    # from becoming another test's undeclared database.
    allow_realm_aliases(monkeypatch, django_db_blocker)
    yield
    # Async tests read realms on asgiref's one shared sync thread, whose connections outlive them:
    # closed there too, or the next test's realm of the same name is read from the last one's file.
    SyncToAsync.single_thread_executor.submit(close_realm_connections).result()
    forget_realm_connections()


@pytest.fixture(autouse=True)
def _audit_queue_per_test(monkeypatch, settings):
    # Each test starts with an empty audit queue and no writer thread: its entries are written when
    # an audit page is read (or audit_flush is called), on the test's own database connection.
    settings.MOBKIT_AUDIT_FLUSH_INTERVAL_S = 0
    monkeypatch.setattr(audit_services, "_writer", audit_services._Writer())


@pytest.fixture
def agent_memory_dir(tmp_path: Path, settings) -> Path:
    """An empty agent-memory directory the console is pointed at for this test."""
    root = tmp_path / "state" / "agent-memory"
    root.mkdir(parents=True)
    settings.MOBKIT_PERSISTENT_STATE = tmp_path / "state"
    settings.MOBKIT_AGENT_MEMORY_ROOT = root
    return root


@pytest.fixture
def realm_writer(agent_memory_dir: Path) -> Iterator[RealmWriterFactory]:
    factory = RealmWriterFactory(agent_memory_dir)
    yield factory
    factory.close()


@pytest.fixture
def demo_realms(agent_memory_dir: Path) -> DemoSummary:
    return seed_demo(root=agent_memory_dir)


@pytest.fixture(scope="module")
def world_files(tmp_path_factory) -> World:
    """The world is only read by the console, so one copy serves a whole module."""
    return build_world(tmp_path_factory.mktemp("world") / "agent-memory")


@pytest.fixture
def world(world_files: World, settings) -> World:
    """The RPC world (tests/support/worlds.py ``build_world``), open to every caller."""
    settings.MOBKIT_PERSISTENT_STATE = world_files.root.parent
    settings.MOBKIT_AGENT_MEMORY_ROOT = world_files.root
    settings.MOBKIT_ACCESS_CONFIG = None
    return world_files


@pytest.fixture
def access_toml_atomic() -> bool:
    """How ``access_toml`` writes: in place here; a directory's conftest may ask for a rename."""
    return False


@pytest.fixture
def access_toml(tmp_path: Path, settings, access_toml_atomic: bool) -> Callable[[str], Path]:
    """Write access.toml with the given text and point MOBKIT_ACCESS_CONFIG at it."""
    path = tmp_path / "config" / "access.toml"

    def write(text: str) -> Path:
        settings.MOBKIT_ACCESS_CONFIG = write_access_toml(path, text, atomic=access_toml_atomic)
        return path

    return write


@pytest.fixture
def posture(access_toml) -> Callable[[str], Path]:
    """Point MOBKIT_ACCESS_CONFIG at a real access.toml holding one of the postures by name."""

    def use(name: str) -> Path:
        return access_toml(BY_NAME[name])

    return use


@pytest.fixture
def signed_in(client, db) -> Callable[[str], User]:
    """Sign the test client in as the user whose subject is ``subject`` (a real session)."""

    def sign_in(subject: str = USER) -> User:
        user = User.objects.filter(username=subject).first() or user_with_subject(subject)
        client.force_login(user)
        return user

    return sign_in


@pytest.fixture
def as_caller(access_toml, settings, signed_in) -> Callable[..., None]:
    """Point the console at access.toml ``text`` (None: no file) and sign in as ``subject``,
    a console admin (Django superuser) when ``superuser``."""

    def use(text: str | None, subject: str, *, superuser: bool = False) -> None:
        if text is None:
            settings.MOBKIT_ACCESS_CONFIG = None
        else:
            access_toml(text)
        user = signed_in(subject)
        user.is_superuser = superuser
        user.save()

    return use


@pytest.fixture
def console(db) -> Client:
    return signed_in_client(local_part_user(READER))


@pytest.fixture
def rpc(console: Client) -> Callable[..., dict[str, Any]]:
    return partial(call_ok, console)


@pytest.fixture
def oidc_issuer(settings) -> Iterator[LoopbackIssuer]:
    """A test OpenID Connect provider on loopback (tests/support/oidc.py), and the console pointed at it
    for bearer JWTs (audience ``AUDIENCE``) and browser sign-in (``CLIENT_ID`` / ``CLIENT_SECRET``)."""
    issuer = LoopbackIssuer().start()
    settings.MOBKIT_OIDC_ISSUER = issuer.url
    settings.MOBKIT_OIDC_AUDIENCE = AUDIENCE
    settings.MOBKIT_OIDC_CLIENT_ID = CLIENT_ID
    settings.MOBKIT_OIDC_CLIENT_SECRET = CLIENT_SECRET
    settings.MOBKIT_OIDC_FETCH_COOLDOWN_S = 0.0
    yield issuer
    issuer.stop()
