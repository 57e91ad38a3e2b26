"""How many connections to realm files and the console's index files a process holds open.

At most ``MOBKIT_REALM_CONNECTIONS`` in all, the least recently used closed first
(docs/serving.md §5). An all-realm page reads hundreds of realms one after another and needs each
realm's connection only while it reads that realm, so a few dozen open at a time serve any number
of realms; a connection closed for the bound opens again on its next use in a fraction of a
millisecond. Readers therefore keep no cursor across reads of other realms.

A connection belongs to the thread that opened it, and only that thread closes it, except:
- an index connection a thread is done with (its request ended, its background run finished) is
  *idle*: any thread may take it up again, and idle ones are the first closed when over the bound;
- realm connections are never idle: they last one request at most (``CONN_MAX_AGE`` 0), so a
  replaced or restored realm file is seen by the next request and a replica copy is not held open
  (docs/replicas.md §4).

A thread over the bound with no idle connection left closes its own least recently used; it
always keeps the one it just opened, so the process holds at most the bound plus one per thread
reading at that moment.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable

from django.core.signals import request_finished
from django.dispatch import receiver

from memory_panel import conf

_lock = threading.RLock()  # reentrant: a finalizer may run on a thread inside it
_open = 0  # every connection counted here: held by some thread or idle
_idle: OrderedDict[str, sqlite3.Connection] = OrderedDict()  # least recently used first


class _Held:
    """One thread's open connections, least recently used first, and which of them are index ones."""

    def __init__(self) -> None:
        self.closers: OrderedDict[str, Callable[[], None]] = OrderedDict()
        self.index: dict[str, sqlite3.Connection] = {}
        # A thread that ends without handing its connections back (a test's, a short-lived one)
        # frees them with its thread-local state: uncount them then.
        weakref.finalize(self, _thread_gone, self.closers, self.index)


class _Local(threading.local):
    def __init__(self) -> None:
        self.held = _Held()


def _thread_gone(closers: dict[str, Callable[[], None]], index: dict[str, sqlite3.Connection]) -> None:
    global _open
    for conn in index.values():
        conn.close()
    with _lock:
        _open -= len(closers)


_local = _Local()


def realm_connection_opened(key: str, close: Callable[[], None]) -> None:
    """Count a realm connection this thread just opened; ``close`` closes it (in this thread)."""
    _count_held(_local.held, key, close)


def connection_used(key: str) -> None:
    """This thread is about to read through ``key`` again: it becomes the most recently used."""
    held = _local.held
    if key in held.closers:
        held.closers.move_to_end(key)


def connection_closed(key: str) -> None:
    """This thread closed ``key`` itself: it no longer counts."""
    global _open
    held = _local.held
    if held.closers.pop(key, None) is not None:
        held.index.pop(key, None)
        with _lock:
            _open -= 1


def index_connection(key: str, connect: Callable[[], sqlite3.Connection]) -> sqlite3.Connection:
    """This thread's connection to index file ``key``: its own, an idle one, or ``connect()``."""
    held = _local.held
    conn = held.index.get(key)
    if conn is not None:
        held.closers.move_to_end(key)
        return conn
    with _lock:
        conn = _idle.pop(key, None)
        if conn is not None:
            held.index[key] = conn
            held.closers[key] = conn.close
            return conn
    conn = connect()
    held.index[key] = conn
    _count_held(held, key, conn.close)
    return conn


def close_index_connections(stale: Callable[[str], bool]) -> None:
    """Close this thread's and the idle index connections whose key is ``stale`` (a retired generation)."""
    for key in [key for key in _local.held.index if stale(key)]:
        conn = _local.held.index[key]
        connection_closed(key)
        conn.close()
    global _open
    with _lock:
        for key in [key for key in _idle if stale(key)]:
            _idle.pop(key).close()
            _open -= 1


@receiver(request_finished, dispatch_uid="memory_panel.open_connections.release")
def release(**kwargs) -> None:
    """This thread is done reading for now: its realm connections close, its index ones go idle."""
    global _open
    held = _local.held
    closers, index = list(held.closers.items()), dict(held.index)
    held.closers.clear()
    held.index.clear()
    for key, close in closers:
        if key not in index:
            close()
    with _lock:
        _open -= len(closers) - len(index)
        for key, conn in index.items():
            if key in _idle:  # another thread had its own to the same file idle already
                conn.close()
                _open -= 1
            else:
                _idle[key] = conn
        _trim_idle()


def open_count() -> int:
    """Connections this process counts as open now (held by a thread, or idle)."""
    with _lock:
        return _open


def _count_held(held: _Held, key: str, close: Callable[[], None]) -> None:
    global _open
    stale = held.closers.pop(key, None)
    held.closers[key] = close
    with _lock:
        _open += stale is None
        _trim_idle()
        over = _open - conf.realm_connections_max()
    # Over the bound with nothing idle to close: this thread's own least recently used go.
    while over > 0 and len(held.closers) > 1:
        oldest, close_oldest = held.closers.popitem(last=False)
        held.index.pop(oldest, None)
        close_oldest()
        with _lock:
            _open -= 1
        over -= 1


def _trim_idle() -> None:
    global _open
    while _idle and _open > conf.realm_connections_max():
        _idle.popitem(last=False)[1].close()
        _open -= 1
