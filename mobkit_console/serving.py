"""Adapting the ASGI server's HTTP requests for Django's WSGI handler (docs/serving.md §2)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

ASGIApp = Any


def with_content_length(app: ASGIApp) -> ASGIApp:
    """A request body sent without Content-Length (chunked) arrives with one.

    WSGI reads exactly Content-Length bytes, so Django would see a chunked JSON-RPC body as empty.
    Such a body is read here first, up to one byte past the largest body the console accepts:
    a longer one is then refused by Django as too large (413), without being read whole.
    """

    async def measured(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = scope.get("headers", [])
        # HTTP/1.1: a request has a body only if it says how it is framed; chunked is the other way.
        if scope["type"] != "http" or not any(name == b"transfer-encoding" for name, _ in headers):
            return await app(scope, receive, send)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1
        body = bytearray()
        more = True
        while more and len(body) < limit:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
        body = body[:limit]
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        framing = (b"transfer-encoding", b"content-length")
        sized = [(n, v) for n, v in headers if n not in framing] + [(b"content-length", str(len(body)).encode())]
        return await app({**scope, "headers": sized}, replay, send)

    return measured
