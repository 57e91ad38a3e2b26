"""The two ways the store writer refuses a write; either way nothing was written."""

from __future__ import annotations

from typing import Any


class StoreWriteError(ValueError):
    """A write MobKit's validator would refuse; nothing was written."""


class ReviewRefused(StoreWriteError):
    """A quarantine review refusal (docs/store-format.md §7.4); ``reason`` is MobKit's refusal word."""

    def __init__(self, reason: str, message: str, **data: Any) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.data = data
