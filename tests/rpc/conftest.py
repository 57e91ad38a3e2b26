"""Fixtures for the /console/rpc tests: real realm files, real users, real access.toml files.

The world and its expected rows come from tests/support/worlds.py and tests/support/written.py,
the calls from tests/support/rpc.py, the postures from tests/support/postures.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from tests.support.clients import user_with_subject
from tests.support.postures import ADMIN_READS, BARE_REVIEWER, POSTURES, REVIEWER, ROOT, USER, write_access_toml
from tests.support.worlds import World, build_world


@pytest.fixture
def signed_in(client, db) -> Callable[[str], User]:
    """Sign the test client in as the user whose subject is ``subject`` (a real session)."""

    def sign_in(subject: str = USER) -> User:
        user = User.objects.filter(username=subject).first() or user_with_subject(subject)
        client.force_login(user)
        return user

    return sign_in


@pytest.fixture(scope="module")
def world_files(tmp_path_factory) -> World:
    """The world is only read by the console, so one copy serves a whole module."""
    return build_world(tmp_path_factory.mktemp("world") / "agent-memory")


@pytest.fixture
def world(world_files: World, settings) -> World:
    settings.MOBKIT_PERSISTENT_STATE = world_files.root.parent
    settings.MOBKIT_AGENT_MEMORY_ROOT = world_files.root
    settings.MOBKIT_ACCESS_CONFIG = None
    return world_files


# docs/access.md §2.6 postures, plus review without reads and the admin, as real access.toml files.
POSTURE_FILES: dict[str, str | None] = {
    "open": None,
    **POSTURES,
    "bare_reviewer": BARE_REVIEWER,
    "admin": ADMIN_READS,
}
# Who calls in each posture.
POSTURE_SUBJECT = {name: USER for name in POSTURE_FILES} | {
    "reviewer": REVIEWER, "bare_reviewer": REVIEWER, "admin": ROOT,
}


@pytest.fixture
def posture(tmp_path: Path, settings, signed_in) -> Callable[[str], None]:
    """Point the console at the posture's access.toml and sign in as that posture's caller."""

    def use(name: str) -> None:
        text = POSTURE_FILES[name]
        if text is None:
            settings.MOBKIT_ACCESS_CONFIG = None
        else:
            settings.MOBKIT_ACCESS_CONFIG = write_access_toml(tmp_path / f"access-{name}.toml", text)
        signed_in(POSTURE_SUBJECT[name])

    return use
