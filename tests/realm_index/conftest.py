"""Fixtures of the realm-index tests (docs/realm-index.md)."""

from __future__ import annotations

import pytest


@pytest.fixture
def too_large_to_read_directly(settings) -> None:
    """Every realm gets an index, built inside the request; one of five rows or more counts as too
    large to read directly (docs/realm-index.md §7)."""
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    settings.MOBKIT_REALM_DIRECT_MAX_ROWS = 5
