"""The writer's clock: the wall clock, or one a test or a story drives by hand."""

from __future__ import annotations

import time


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class ManualClock:
    """A clock tests drive by hand, so writes can tie on updated_at_ms or cross 7-day windows."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms

    def set(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def advance(self, ms: int = 1) -> int:
        self.now_ms += ms
        return self.now_ms
