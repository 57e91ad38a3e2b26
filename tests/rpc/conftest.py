"""Fixtures for the /console/rpc tests: real realm files, real users, real access.toml files.

The world (``world`` in tests/conftest.py) and its expected rows come from tests/support/worlds.py
and tests/support/written.py, the calls from tests/support/rpc.py, the postures and who calls
under each (``CALLERS``, ``use_caller_posture``) from tests/support/postures.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from tests.support.clients import user_with_subject
from tests.support.postures import USER, use_caller_posture


@pytest.fixture
def signed_in(client, db) -> Callable[[str], User]:
    """Sign the test client in as the user whose subject is ``subject`` (a real session)."""

    def sign_in(subject: str = USER) -> User:
        user = User.objects.filter(username=subject).first() or user_with_subject(subject)
        client.force_login(user)
        return user

    return sign_in


@pytest.fixture
def posture(tmp_path: Path, settings, signed_in) -> Callable[[str], None]:
    """Point the console at the posture's access.toml and sign in as that posture's caller."""

    def use(name: str) -> None:
        signed_in(use_caller_posture(settings, tmp_path, name))

    return use
