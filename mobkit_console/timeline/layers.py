"""The single-process channel layer (no REDIS_URL), trimmed for the timeline's one busy group.

Channels' InMemoryChannelLayer sweeps every channel and group for expired entries on each receive
and group send, and starts a task per member for each group send. With every open socket in the
timeline group, one event therefore cost a full sweep per socket plus a task per socket
(bench/timeline_fanout.py). Messages and memberships still expire as configured, at most a second
late: the sweep that removes them runs at most once a second.
"""

from __future__ import annotations

import time
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer

SWEEP_INTERVAL_S = 1.0  # far below the layer's expiry (60 s) and group expiry (1 day)


class TimelineInMemoryChannelLayer(InMemoryChannelLayer):
    _swept_at = float("-inf")

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._swept_at < SWEEP_INTERVAL_S:
            return
        self._swept_at = now
        super()._clean_expired()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        # send() never suspends (put_nowait, ChannelFull when the member's queue is at capacity), so
        # members are served in turn instead of through a task apiece; a full one is skipped as the
        # parent does.
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, {})):
            try:
                await self.send(channel, message)
            except ChannelFull:
                pass
