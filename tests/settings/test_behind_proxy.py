"""X-Forwarded-Proto is trusted only when MOBKIT_BEHIND_PROXY says a proxy sets it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.clients import user_with_subject
from tests.support.postures import USER
from tests.support.rpc import call

REPO = Path(__file__).resolve().parents[2]


def proxy_header(tmp_path: Path, **env: str) -> object:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MOBKIT_", "DJANGO_"))}
    environment.update(MOBKIT_PERSISTENT_STATE=str(tmp_path), DJANGO_SETTINGS_MODULE="mobkit_console.settings", **env)
    script = "import json; from django.conf import settings; print(json.dumps(settings.SECURE_PROXY_SSL_HEADER))"
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=environment,
                            capture_output=True, text=True, timeout=60, check=True)
    return json.loads(result.stdout)


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
