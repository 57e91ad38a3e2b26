"""What a page worked out from one realm file, kept while the file stands still (docs/realm-index.md §10).

An all-realm page asks every realm the same few questions: its holdings, its tile facts, its
pipeline counts, its format. Their answers depend on the file's content alone (what a caller may
see of them is decided afterwards, in the selector), so they are kept per realm and question, in
this process, for as long as the realm's signature (``memory_panel/store/changes.py``) is the one
they were worked out under. An unchanged realm then costs a lookup instead of a connection and a
query, and 500 quiet realms cost what a few do.

The signature is read once per request and before any answer is worked out, so a write that lands
while one is worked out moves it, and the answer is worked out again next time. A realm written
within the last second has no trusted signature: its answers are worked out afresh every time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from itertools import islice
from typing import TypeVar

from memory_panel.store.changes import Signature, settled_signature
from memory_panel.store.realms import realm_path
from memory_panel.store.request_memo import once_per_request

T = TypeVar("T")

# A list of rows kept for a realm holds at most this many; a realm with more is read afresh.
KEPT_ROWS = 2_000

# Answers kept in all, least recently used dropped first: a few per realm for thousands of realms.
MEMO_ENTRIES = 16_384

_answers: OrderedDict[tuple[str, Hashable], tuple[Signature, object]] = OrderedDict()
_lock = threading.Lock()


def realm_signature(name: str) -> Signature | None:
    """The realm file's settled signature, once per request; None while unsettled, or when gone."""
    return once_per_request(("realm_signature", name), lambda: _signature(name))


def _signature(name: str) -> Signature | None:
    try:
        return settled_signature(realm_path(name))
    except FileNotFoundError:
        return None


def realm_memo(name: str, question: Hashable, answer: Callable[[], T]) -> T:
    """``answer()`` for realm ``name``, or the one worked out under the realm's current signature.

    ``answer`` must depend on the realm file's content alone, and its value must not be changed
    by whoever asks (it is handed to every later asker as it is). An answer of None is not kept:
    it says "not yet" (an index still being built), which may change while the file does not.
    """
    current = realm_signature(name)
    if current is None:
        return answer()
    key = (name, question)
    with _lock:
        kept = _answers.get(key)
        if kept is not None and kept[0] == current:
            _answers.move_to_end(key)
            return kept[1]  # type: ignore[return-value]
    value = answer()
    if value is None:
        return value
    with _lock:
        _answers[key] = (current, value)
        _answers.move_to_end(key)
        while len(_answers) > MEMO_ENTRIES:
            _answers.popitem(last=False)
    return value


def kept_rows(rows: Iterable[T]) -> list[T] | None:
    """The rows, when there are at most ``KEPT_ROWS`` (an answer to keep); else None (read them afresh)."""
    head = list(islice(rows, KEPT_ROWS + 1))
    return head if len(head) <= KEPT_ROWS else None
