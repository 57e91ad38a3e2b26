"""bin/lib/venv.sh (bin/demo's first step) says what it installs, keeps pip's output in a log, and says in one
line why an install failed and where that log is (docs/demo.md §4)."""

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


def _checkout(tmp_path: Path, *, pip_status: int, pip_output: str = PIP_OUTPUT) -> Path:
    """A checkout whose .venv python is a stand-in that answers ``-m pip install`` like pip."""
    (tmp_path / "bin" / "lib").mkdir(parents=True)
    for script in ("venv.sh", "pip.sh"):
        shutil.copy(REPO / "bin" / "lib" / script, tmp_path / "bin" / "lib" / script)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\ncat <<'OUT'\n{pip_output}OUT\nexit {pip_status}\n")
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
        " pip's log: .venv/pip-install.log) ...",
        "  fetching Django",
        "  fetching channels",
        "  installing the fetched packages ...",
        "Installed.",
    ]
    assert "Successfully installed" in (tmp_path / ".venv" / "pip-install.log").read_text()
    assert _source(tmp_path).stdout == ""  # installed: a re-run says nothing and starts at once


def test_a_failed_install_stops_with_one_line_naming_pips_error_and_its_log(tmp_path):
    failing = PIP_OUTPUT + "WARNING: Location 'file:///opt/pypi/simple/x/' is ignored\nERROR: No matching distribution found for channels>=4.1\n"
    run = _source(_checkout(tmp_path, pip_status=1, pip_output=failing))

    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        "The install of the project into .venv failed (ERROR: No matching distribution found for channels>=4.1);"
        " pip's log: .venv/pip-install.log"
    ]
    assert "WARNING" not in run.stdout
    assert "Obtaining file:///x" in (tmp_path / ".venv" / "pip-install.log").read_text()
    assert not (tmp_path / ".venv" / ".mobkit-console-installed").exists()


def test_pips_warnings_stay_in_the_log(tmp_path):
    noisy = "".join(f"WARNING: Location 'file:///opt/pypi/simple/p{n}/' is ignored\n" for n in range(80)) + PIP_OUTPUT
    run = _source(_checkout(tmp_path, pip_status=0, pip_output=noisy))

    assert run.returncode == 0 and run.stderr == ""
    assert "WARNING" not in run.stdout and len(run.stdout.splitlines()) == 5
    assert (tmp_path / ".venv" / "pip-install.log").read_text().count("WARNING") == 80
