"""Long downloads: NDJSON lines, and how they leave the process a piece at a time (docs/serving.md §2).

Shared by the record exports (``records.ndjson``, ``records.csv``) and the audit log's ``audit.ndjson``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest

# One hand-over per piece of about this many characters, not one per line: a hand-over (a thread
# hop under ASGI, a trip through the event loop and a chunk on the socket under a2wsgi) costs as
# much as writing dozens of rows, so line-by-line made a large download several times slower.
PIECE_CHARS = 64 * 1024


def ndjson_line(value: Any) -> str:
    """``value`` as one NDJSON line. Non-ASCII text stays itself (``\\u`` escapes would double it),
    except U+2028 and U+2029: valid raw in JSON, they end a line for JavaScript before ES2019 and
    for line readers that split on Unicode line breaks, so a line holding one would be read as two
    (docs/search.md §6). Escaped, they read back as the same text."""
    text = json.dumps(value, ensure_ascii=False)
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return text + "\n"


def streamed(request: HttpRequest, lines: Iterator[str]) -> Iterator[str] | AsyncIterator[str]:
    """``lines`` joined into pieces; under ASGI an async iterator pulling a piece at a time on the
    request's thread (Django would read a sync iterator whole before sending a byte)."""
    if not isinstance(request, ASGIRequest):
        return _pieces(lines)
    return _pulled(lines)


def _piece(lines: Iterator[str]) -> str:
    """The next lines joined, up to about PIECE_CHARS; empty once the download has ended."""
    parts: list[str] = []
    size = 0
    for line in lines:
        parts.append(line)
        size += len(line)
        if size >= PIECE_CHARS:
            break
    return "".join(parts)


def _pieces(lines: Iterator[str]) -> Iterator[str]:
    try:
        while piece := _piece(lines):
            yield piece
    finally:
        lines.close()


async def _pulled(lines: Iterator[str]) -> AsyncIterator[str]:
    # thread_sensitive: every pull runs on the thread that opened the request's connections.
    pull = sync_to_async(_piece, thread_sensitive=True)
    try:
        while piece := await pull(lines):
            yield piece
    finally:  # the client went away (cancelled) or the walk ended: close it where it runs
        await sync_to_async(lines.close, thread_sensitive=True)()
