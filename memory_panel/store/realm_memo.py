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
# Answers over many realms at once (``realms_memo``): few, but each as large as its realms together.
MERGED_ENTRIES = 64

_MISSING = object()


class _Kept:
    """Answers kept under the stamp they were worked out at, the least recently used dropped first."""

    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._answers: OrderedDict[Hashable, tuple[Hashable, object]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, stamp: Hashable) -> object:
        """The answer kept for ``key`` under ``stamp``, else ``_MISSING``."""
        with self._lock:
            kept = self._answers.get(key)
            if kept is None or kept[0] != stamp:
                return _MISSING
            self._answers.move_to_end(key)
            return kept[1]

    def put(self, key: Hashable, stamp: Hashable, value: object) -> None:
        with self._lock:
            self._answers[key] = (stamp, value)
            self._answers.move_to_end(key)
            while len(self._answers) > self._entries:
                self._answers.popitem(last=False)


_per_realm = _Kept(MEMO_ENTRIES)
_merged = _Kept(MERGED_ENTRIES)


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
    kept = _per_realm.get((name, question), current)
    if kept is not _MISSING:
        return kept  # type: ignore[return-value]
    value = answer()
    if value is not None:
        _per_realm.put((name, question), current, value)
    return value


def realms_memo(names: list[str], question: Hashable, answer: Callable[[], tuple[T, bool]]) -> T:
    """``answer()`` over the realms ``names`` together, kept while none of their signatures moves.

    An all-realm page that merges one list from every realm otherwise walks 500 realms' kept
    answers on each request; kept merged, it costs a look at each realm's signature (read for
    the request anyway) and then only the rows it shows. ``answer`` returns its value and whether
    it may be kept (not when a realm could not be read: the next request tries it again).
    """
    signatures = tuple(realm_signature(name) for name in names)
    if None in signatures:
        return answer()[0]
    key = (question, tuple(names))
    kept = _merged.get(key, signatures)
    if kept is not _MISSING:
        return kept  # type: ignore[return-value]
    value, keep = answer()
    if keep:
        _merged.put(key, signatures, value)
    return value


def kept_rows(rows: Iterable[T]) -> list[T] | None:
    """The rows, when there are at most ``KEPT_ROWS`` (an answer to keep); else None (read them afresh)."""
    head = list(islice(rows, KEPT_ROWS + 1))
    return head if len(head) <= KEPT_ROWS else None
