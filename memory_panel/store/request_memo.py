"""Answers worked out once per request: whether a realm's indexes are ready and caught up.

Every selector of a page asks for the realm's index, and each ask checks the file, the newest
generation and the audit rows past the high-water mark. Within one request the answer cannot
usefully change, so it is kept from the first ask to the end of the request; the next request
asks again, so a write is still listed by the next request (docs/realm-index.md §4).

Outside a request (the realm follower, commands, tests calling selectors) nothing is kept. A
request runs on one thread from start to finish (docs/serving.md §2), so the memo is the
thread's, opened by ``request_started`` and dropped by ``request_finished``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

from django.core.signals import request_finished, request_started
from django.dispatch import receiver

T = TypeVar("T")

_local = threading.local()


@receiver(request_started, dispatch_uid="memory_panel.request_memo.open")
def _open(**kwargs) -> None:
    _local.memo = {}


@receiver(request_finished, dispatch_uid="memory_panel.request_memo.drop")
def _drop(**kwargs) -> None:
    _local.__dict__.pop("memo", None)


def once_per_request(key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, or what it returned earlier in this request. A raise is not kept."""
    memo: dict | None = getattr(_local, "memo", None)
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]
