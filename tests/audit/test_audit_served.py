"""The audit log in a real deployment: daphne serving, entries written by its background thread,
and a command-line process whose queued entry outlives it (docs/audit-and-oidc.md §2)."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from tests.support.servers import deployment_env, manage, start_daphne, stop_daphne

pytestmark = pytest.mark.django_db(transaction=True)


def _get(url: str, token: str) -> bytes:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read()


def test_a_streamed_export_and_a_token_made_on_the_command_line_are_recorded(tmp_path):
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    env = deployment_env(state, MOBKIT_TIMELINE_FOLLOW_REALMS="0")
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo", "--realm", "default")
    token = manage(env, "mobkit_token", "ops@example.test").strip().splitlines()[-1]
    manage(env, "shell", "-c", "from django.contrib.auth.models import User; "
           "User.objects.filter(username='ops@example.test').update(is_superuser=True)")
    server = start_daphne(env)
    try:
        exported = _get(f"{server.http}/console/memory/records.ndjson?scope=identity", token).splitlines()
        assert exported
        deadline = time.monotonic() + 10
        while True:  # the export's entry is queued when the stream ends, then written by the thread
            entries = [json.loads(line) for line in _get(f"{server.http}/console/audit.ndjson", token).splitlines()]
            export = [e for e in entries if e["action"] == "records.export"]
            if export or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        stop_daphne(server)
    [entry] = export
    assert (entry["subject"], entry["sign_in"], entry["client"]) == ("ops@example.test", "token", "127.0.0.1")
    assert entry["detail"] == {"format": "ndjson", "filters": {"scope": "identity"}, "rows": len(exported)}
    [created] = [e for e in entries if e["action"] == "token.create"]
    assert created["subject"] == "ops@example.test" and token.startswith(created["target"])
