"""Fixtures for the /console/rpc tests: real realm files, real users, real access.toml files.

The world (``world`` in tests/conftest.py) and its expected rows come from tests/support/worlds.py
and tests/support/written.py, the calls from tests/support/rpc.py, the postures and who calls
under each (``CALLERS``, ``use_caller_posture``) from tests/support/postures.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.postures import use_caller_posture


@pytest.fixture
def posture(tmp_path: Path, settings, signed_in) -> Callable[[str], None]:
    """Point the console at the posture's access.toml and sign in as that posture's caller."""

    def use(name: str) -> None:
        signed_in(use_caller_posture(settings, tmp_path, name))

    return use
