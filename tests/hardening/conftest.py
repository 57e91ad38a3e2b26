"""Fixtures of the hardening tests: a signed-in client (access control off unless a test sets it)."""

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
