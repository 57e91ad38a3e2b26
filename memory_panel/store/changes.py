"""Has a realm file been written since the last look? The one answer every reader of realms uses.

The console's indexes (catching up, following usage counters), the timeline watcher and the
replica copies all ask it, and all get it from the file's *signature*: what every commit moves,
read with a few ``stat`` calls and no open connection, so watching 500 realms holds no file
descriptors (docs/realm-index.md §4).

- Every commit writes the ``-wal`` (or, without WAL, the file itself), and a checkpoint writes
  the file; a replaced or restored file has another inode; a replica copy's follower rewrites
  its ``-txid`` file after each transaction it applies (docs/replicas.md §4).
- A file's modification time comes from a coarse clock (a tick of a few milliseconds), so a write
  in the same tick as a look can leave size and time as the look saw them. Only a signature whose
  newest time is older than ``SETTLED_NS`` is trusted to mean "unchanged since"; until then the
  file counts as changed at every look.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from memory_panel.store.realms import copy_change_stamp

SETTLED_NS = 1_000_000_000

Signature = tuple


def signature(path: Path, stat: os.stat_result | None = None) -> tuple[Signature, bool]:
    """What every commit to the realm file moves, and whether it has settled (``SETTLED_NS``).

    Raises FileNotFoundError when the file is gone.
    """
    stat = stat if stat is not None else path.stat()
    try:
        wal = os.stat(f"{path}-wal")
        # An empty -wal holds nothing: a reader opening a WAL file its writer closed cleanly creates
        # one, and that is no change to the realm (a checkpoint that empties it writes the file).
        wal_part = (wal.st_size, wal.st_mtime_ns) if wal.st_size else (0, 0)
    except FileNotFoundError:
        wal_part = (0, 0)
    copy_stamp = copy_change_stamp(path) or (0, 0)
    settled = time.time_ns() - max(stat.st_mtime_ns, wal_part[1], copy_stamp[0]) >= SETTLED_NS
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, *wal_part, *copy_stamp), settled


def settled_signature(path: Path, stat: os.stat_result | None = None) -> Signature | None:
    """The file's signature, or None while it is too recent to be trusted to mean "unchanged since"."""
    found, settled = signature(path, stat)
    return found if settled else None


class ChangeWatch:
    """Whether each realm file was written since this watch last looked at it.

    Each reader keeps its own watch (its own "last look"). The first look at a file counts as a
    change (what the reader holds may be older than the process); so does a moved signature; and
    so does the first look after the file settles, when the last look was taken before it had:
    a write in the same clock tick as that look could have left the signature as it was. With
    ``period``, a file is looked at no more than once a period and reads as unchanged in between.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.looks: dict[str, tuple[Signature | None, bool, float]] = {}

    def changed(self, path: Path, *, period: float = 0.0) -> bool:
        now = time.monotonic()
        with self.lock:
            look = self.looks.get(str(path))
            if look is not None and now - look[2] < period:
                return False
            try:
                found, settled = signature(path)
            except FileNotFoundError:
                found, settled = None, True
            self.looks[str(path)] = (found, settled, now)
            if look is None or found != look[0]:
                return True
            return settled and not look[1]
