"""Fixtures of the hardening tests: a signed-in client (access control off unless a test sets it), index modes."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client


@pytest.fixture
def client_signed_in(db, settings) -> Client:
    settings.MOBKIT_ACCESS_CONFIG = None
    client = Client()
    client.force_login(get_user_model().objects.create_user("ops", "ops@example.test", "pw"))
    return client


@pytest.fixture(params=["direct", "indexed"])
def index_mode(request, settings) -> str:
    """Each test twice: small realms read directly, and every realm through the console's index."""
    if request.param == "indexed":
        settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
        settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    return request.param
