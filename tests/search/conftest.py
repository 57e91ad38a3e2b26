"""A posture fixture that also signs the test client in as that posture's caller."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.postures import use_caller_posture


@pytest.fixture
def posture(tmp_path: Path, settings, signed_in) -> Callable[[str], None]:
    def use(name: str) -> None:
        signed_in(use_caller_posture(settings, tmp_path, name))

    return use
