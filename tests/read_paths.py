"""The two ways a realm is read: directly, or through the console's realm index built for it."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["direct", "index"])
def read_path(request, settings) -> str:
    """Run a test over the direct read and again with every realm indexed (built inline)."""
    if request.param == "index":
        settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
        settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    return request.param
