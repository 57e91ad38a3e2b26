"""Without DJANGO_SECRET_KEY the console never signs with the key committed to the repository."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PUBLIC_KEY = "django-insecure-mobkit-console-development-key-change-me-in-production"


def started_key(state: Path, **env: str) -> tuple[str, str]:
    """The SECRET_KEY a console process starts with, and what it logged."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MOBKIT_", "DJANGO_"))}
    environment.update(MOBKIT_PERSISTENT_STATE=str(state), DJANGO_SETTINGS_MODULE="mobkit_console.settings", **env)
    result = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.SECRET_KEY)"],
        cwd=REPO, env=environment, capture_output=True, text=True, timeout=60, check=True,
    )
    return result.stdout.strip(), result.stderr


def test_without_a_key_a_private_one_is_generated_once_kept_0600_and_logged(tmp_path):
    key, log = started_key(tmp_path / "state")
    assert key != PUBLIC_KEY and len(key) >= 50
    path = tmp_path / "state" / "console" / "secret_key"
    assert path.read_text().strip() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert f"generated a signing key for this installation in {path}" in log
    again, log = started_key(tmp_path / "state")
    assert again == key and "generated" not in log  # sessions survive a restart
    assert list(path.parent.iterdir()) == [path]  # no scratch file left behind


def test_a_configured_key_is_used_and_nothing_is_written(tmp_path):
    key, _ = started_key(tmp_path / "state", DJANGO_SECRET_KEY="operator-chosen-key")
    assert key == "operator-chosen-key"
    assert not (tmp_path / "state" / "console" / "secret_key").exists()


def test_debug_keeps_the_development_key(tmp_path):
    key, _ = started_key(tmp_path / "state", DJANGO_DEBUG="1")
    assert key == PUBLIC_KEY
    assert not (tmp_path / "state" / "console" / "secret_key").exists()


def test_a_state_directory_it_cannot_write_stops_start_up_naming_the_way_out(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "console").write_text("a file where the console's directory should be")
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MOBKIT_", "DJANGO_"))}
    environment.update(MOBKIT_PERSISTENT_STATE=str(state), DJANGO_SETTINGS_MODULE="mobkit_console.settings")
    result = subprocess.run([sys.executable, "-c", "from django.conf import settings; settings.SECRET_KEY"],
                            cwd=REPO, env=environment, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "ImproperlyConfigured: DJANGO_SECRET_KEY is not set and no signing key can be kept in" in result.stderr
