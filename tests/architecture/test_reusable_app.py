"""memory_panel installs into a Django project that is not the console (README "Architecture").

The host in ``tests/architecture/host/`` has none of ``mobkit_console`` (only the ``access`` app and ``memory_panel``): no
console settings, no shell, no JSON-RPC endpoint, its own ``base.html`` and URL prefix. It runs
in a subprocess because Django can be set up only once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from memory_panel.api import all_methods
from memory_panel.conf import agent_memory_root
from memory_panel.simulator.store_writer import StoreWriter, identity_scope
from access.caller import access_for, caller_for_user

with StoreWriter.create("default", root=agent_memory_root()) as writer:
    writer.remember(identity_scope("default", "ana"), "Lisbon office opens at nine", "Ask for Rita at the desk.")
user = get_user_model().objects.create_user("host-operator", password="pw")
client = Client()
client.force_login(user)
page = client.get("/ops/memory/records/")
methods = {method.name: method for method in all_methods()}
result = methods["mobkit/memory/panel/records"].handler({}, access=access_for(caller_for_user(user, sign_in="session")))
print(json.dumps({
    "status": page.status_code,
    "page_has_title": "Lisbon office opens at nine" in page.content.decode(),
    "page_uses_host_base": "· host</title>" in page.content.decode(),
    "rpc_titles": [row["title"] for row in result["records"]],
    "console_installed": "mobkit_console.rpc" in settings.INSTALLED_APPS,
}))
"""


def test_memory_panel_serves_its_pages_and_methods_inside_another_project(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.architecture.host.settings",
        "HOST_STATE": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {
        "status": 200,
        "page_has_title": True,
        "page_uses_host_base": True,
        "rpc_titles": ["Lisbon office opens at nine"],
        "console_installed": False,
    }
