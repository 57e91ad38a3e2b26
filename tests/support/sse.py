"""``GET /console/events/stream`` in tests: opened through Django's AsyncClient, its body read in a task."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from django.test import AsyncClient

STREAM = "/console/events/stream"


class SseReader:
    """Reads an event-stream body in a task of its own (a cancelled read would end the stream)."""

    def __init__(self, body: AsyncIterator[bytes]) -> None:
        self.body = body
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        buffer = ""
        async for chunk in self.body:
            buffer += chunk.decode("utf-8")
            while "\n\n" in buffer:
                block, buffer = buffer.split("\n\n", 1)
                await self.queue.put(_parse(block))

    async def blocks(self, *, quiet_s: float = 0.4) -> list[dict[str, Any]]:
        """Every block (event or comment) until none arrives for ``quiet_s``."""
        out = []
        while True:
            try:
                out.append(await asyncio.wait_for(self.queue.get(), quiet_s))
            except TimeoutError:
                return out

    async def events(self, *, quiet_s: float = 0.4) -> list[dict[str, Any]]:
        return [block for block in await self.blocks(quiet_s=quiet_s) if "event" in block]

    async def close(self) -> None:
        self.task.cancel()
        try:
            await self.task
        except asyncio.CancelledError:
            pass
        await self.body.aclose()


def _parse(block: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for line in block.split("\n"):
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "":
            out["comment"] = value
        elif field == "data":
            out["data"] = json.loads(value)
        else:
            out[field] = value
    return out


async def open_stream(
    *, token: str | None, query: str = "", headers: dict[str, str] | None = None, client: AsyncClient | None = None
):
    """The stream's response; ``client`` (a signed-in AsyncClient) rides its session cookie."""
    headers = dict(headers or {})
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return await (client or AsyncClient()).get(f"{STREAM}?{query}" if query else STREAM, headers=headers)
