"""X-Forwarded-Proto is trusted only when MOBKIT_BEHIND_PROXY says a proxy sets it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.clients import user_with_subject
from tests.support.environment import setting_under_env
from tests.support.postures import USER
from tests.support.rpc import call


def proxy_header(tmp_path: Path, **env: str) -> object:
    return setting_under_env(tmp_path, "SECURE_PROXY_SSL_HEADER", **env)


def test_the_forwarded_scheme_is_trusted_only_behind_a_configured_proxy(tmp_path):
    assert proxy_header(tmp_path) is None
    assert proxy_header(tmp_path, MOBKIT_BEHIND_PROXY="0") is None
    assert proxy_header(tmp_path, MOBKIT_BEHIND_PROXY="1") == ["HTTP_X_FORWARDED_PROTO", "https"]


PAGE_ON_HTTPS = {"HTTP_HOST": "testserver", "HTTP_ORIGIN": "https://testserver", "HTTP_X_FORWARDED_PROTO": "https"}


@pytest.mark.django_db
def test_a_client_cannot_claim_https_by_header(client, world):
    client.force_login(user_with_subject(USER))
    assert call(client, "mobkit/capabilities", **PAGE_ON_HTTPS).status == 403  # the request was plain http


@pytest.mark.django_db
def test_behind_a_proxy_its_forwarded_scheme_is_the_requests(client, world, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")  # MOBKIT_BEHIND_PROXY=1
    client.force_login(user_with_subject(USER))
    assert call(client, "mobkit/capabilities", **PAGE_ON_HTTPS).status == 200
