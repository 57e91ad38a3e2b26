"""Stopping a command the way a terminal or a process manager does: a signal to its whole process
group (Ctrl-C, ``kill -TERM -PGID``, a container runtime), and finding what is left (Linux /proc).

Commands under test are started with ``start_new_session=True``, so their group is theirs alone.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

STOPPED_WITHIN_S = 5.0


def group_members(pgid: int) -> list[str]:
    """``"pid: command line"`` of every live process of group ``pgid`` (a zombie is gone: it only
    waits for its parent to read its status)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, _, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile
            continue
        if int(group) == pgid and state != "Z":
            found.append(f"{entry.name}: {cmdline}")
    return found


def stop_group(pgid: int, sig: int, *, again_after_s: float | None = None) -> float:
    """Send ``sig`` to the group; with ``again_after_s``, send it once more to the group's leader that
    long after (a shell's trap forwarding the signal its children already had). Returns the seconds
    until no process of the group is left; fails naming what is left after ``STOPPED_WITHIN_S``."""
    started = time.monotonic()
    os.killpg(pgid, sig)
    again_at = None if again_after_s is None else started + again_after_s
    while group_members(pgid):
        now = time.monotonic()
        if again_at is not None and now >= again_at:
            again_at = None
            try:
                os.kill(pgid, sig)
            except ProcessLookupError:
                pass
        if now - started > STOPPED_WITHIN_S:
            left = group_members(pgid)
            for member in left:  # never left behind for the next test
                try:
                    os.kill(int(member.split(":")[0]), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            raise AssertionError(f"still running {STOPPED_WITHIN_S:g} s after {signal.Signals(sig).name}: {left}")
        time.sleep(0.02)
    return time.monotonic() - started


def kill_group(pgid: int) -> None:
    """SIGKILL whatever is left of the group (a test's cleanup after a failure)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def integrity(path: Path) -> str:
    """SQLite's ``PRAGMA integrity_check`` of the database at ``path``: "ok" when whole."""
    with sqlite3.connect(path) as conn:
        return "; ".join(row[0] for row in conn.execute("PRAGMA integrity_check"))
