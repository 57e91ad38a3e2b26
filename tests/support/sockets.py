"""The timeline's transports in tests: tokens, sockets on the real ASGI app, ingest, envelopes."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator, WebsocketCommunicator

from mobkit_console.accounts.tokens import token_issue, user_for_subject
from mobkit_console.asgi import console_application as application

INGEST_TOKEN = "test-ingest-secret"


async def token_for(subject: str) -> str:
    def issue() -> str:
        return token_issue(user=user_for_subject(subject))

    return await database_sync_to_async(issue)()


async def open_socket(path: str, *, token: str | None = None, query: str = "") -> WebsocketCommunicator:
    params = "&".join(p for p in (f"auth_token={token}" if token else "", query) if p)
    communicator = WebsocketCommunicator(application, f"{path}?{params}" if params else path)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def ingest(body: Any, *, token: str = INGEST_TOKEN) -> tuple[int, dict[str, Any]]:
    return await ingest_raw(json.dumps(body).encode("utf-8"), token=token)


async def ingest_raw(raw: bytes, *, token: str | None = INGEST_TOKEN, method: str = "POST") -> tuple[int, dict[str, Any]]:
    response = await ingest_response(raw, token=token, method=method)
    return response["status"], json.loads(response["body"])


async def ingest_response(raw: bytes, *, token: str | None = INGEST_TOKEN, method: str = "POST") -> dict[str, Any]:
    """``POST /console/events`` through the real ASGI app (ingest is a Channels consumer, not a view):
    the ASGI response, ``status``, ``headers`` and ``body``."""
    headers = [(b"content-type", b"application/json")]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode("latin-1")))
    communicator = HttpCommunicator(application, method, "/console/events", body=raw, headers=headers)
    return await communicator.get_response(timeout=30)


def envelope(identity: str = "_system", event_type: str = "memory.dream.started", /, **data: Any) -> dict[str, Any]:
    return {"identity": identity, "event_type": event_type, "timestamp_ms": 1_700_000_000_000,
            "data": {"realm": "default", **data}}


async def receive_events(communicator: WebsocketCommunicator, *, quiet_s: float = 0.4) -> list[dict[str, Any]]:
    """Every frame until the socket stays quiet for ``quiet_s`` (keep-alives skipped).

    ``receive_nothing`` rather than a receive timeout: a timed-out receive cancels the consumer.
    """
    out = []
    while not await communicator.receive_nothing(timeout=quiet_s):
        frame = await communicator.receive_json_from()
        if frame["type"] != "keep_alive":
            out.append(frame)
    return out


async def received_text(communicator: WebsocketCommunicator, *, quiet_s: float = 0.5) -> str:
    """Every text frame (keep-alives too) until the socket stays quiet for ``quiet_s``, joined."""
    frames = []
    while not await communicator.receive_nothing(timeout=quiet_s):
        frames.append(await communicator.receive_from())
    return "\n".join(frames)


class BodyText:
    """A streaming response body (an SSE stream) read into text by a task of its own, until closed."""

    def __init__(self, body: AsyncIterator[bytes]) -> None:
        self.parts: list[str] = []
        self.task = asyncio.create_task(self._pump(body))

    async def _pump(self, body: AsyncIterator[bytes]) -> None:
        async for chunk in body:
            self.parts.append(chunk.decode("utf-8"))

    async def close(self) -> str:
        """Everything read so far; the stream ends (as when its client goes away)."""
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        return "".join(self.parts)
