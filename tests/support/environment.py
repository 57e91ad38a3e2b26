"""A setting as a console process started with a given environment reads it (settings are read once,
at start-up, so a fresh interpreter is the honest way to see an environment variable's effect)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def setting_under_env(state: Path, name: str, **env: str) -> object:
    """``settings.<name>`` (as JSON) in a process whose MOBKIT_ and DJANGO_ variables are only ``env``,
    with its persistent state in ``state``."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MOBKIT_", "DJANGO_"))}
    environment.update(MOBKIT_PERSISTENT_STATE=str(state), DJANGO_SETTINGS_MODULE="mobkit_console.settings", **env)
    script = f"import json; from django.conf import settings; print(json.dumps(settings.{name}))"
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=environment,
                            capture_output=True, text=True, timeout=60, check=True)
    return json.loads(result.stdout)
