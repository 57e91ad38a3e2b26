"""Access fixtures: every config under test is a real access.toml the console is pointed at."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest


def bump_mtime(path: Path) -> None:
    """Make an edit visible to the mtime/size/inode check even within one filesystem tick."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


@pytest.fixture
def access_toml(tmp_path: Path, settings) -> Callable[[str], Path]:
    """Write access.toml with the given text and point MOBKIT_ACCESS_CONFIG at it."""
    path = tmp_path / "config" / "access.toml"
    path.parent.mkdir(exist_ok=True)

    def write(text: str) -> Path:
        existed = path.exists()
        path.write_text(text, encoding="utf-8")
        if existed:
            bump_mtime(path)
        settings.MOBKIT_ACCESS_CONFIG = path
        return path

    return write
