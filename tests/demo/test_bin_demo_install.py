"""bin/lib/venv.sh (bin/demo's first step) says what it installs, and shows pip's log when it fails (docs/demo.md §4)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support.servers import REPO

PIP_OUTPUT = """Obtaining file:///x
Collecting Django<6,>=5.2 (from mobkit-console==0.1)
  Downloading django-5.2.1-py3-none-any.whl (8.3 MB)
Collecting channels>=4.1
Installing collected packages: asgiref, Django, channels
Successfully installed Django-5.2.1
"""


def _checkout(tmp_path: Path, *, pip_status: int) -> Path:
    """A checkout whose .venv python is a stand-in that answers ``-m pip install`` like pip."""
    (tmp_path / "bin" / "lib").mkdir(parents=True)
    shutil.copy(REPO / "bin" / "lib" / "venv.sh", tmp_path / "bin" / "lib" / "venv.sh")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\ncat <<'OUT'\n{PIP_OUTPUT}OUT\nexit {pip_status}\n")
    python.chmod(0o755)
    return tmp_path


def _source(checkout: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", "set -euo pipefail; . bin/lib/venv.sh"], cwd=checkout,
                          capture_output=True, text=True, timeout=30)


def test_first_install_names_each_package_it_fetches(tmp_path):
    run = _source(_checkout(tmp_path, pip_status=0))

    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "Installing the console and its dependencies into .venv (the first time takes a minute or two;"
        " pip's log: .venv/install.log) ...",
        "  fetching Django",
        "  fetching channels",
        "  installing the fetched packages ...",
        "Installed.",
    ]
    assert "Successfully installed" in (tmp_path / ".venv" / "install.log").read_text()
    assert _source(tmp_path).stdout == ""  # installed: a re-run says nothing and starts at once


def test_a_failed_install_stops_and_shows_the_end_of_pips_log(tmp_path):
    run = _source(_checkout(tmp_path, pip_status=1))

    assert run.returncode == 1
    assert "The install failed; the end of .venv/install.log:" in run.stderr and "Obtaining file:///x" in run.stderr
    assert not (tmp_path / ".venv" / ".mobkit-console-installed").exists()
