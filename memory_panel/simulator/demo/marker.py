"""How a demo realm file is told apart from one the MobKit runtime wrote (docs/demo.md §2).

``seed_demo`` adds the row ``('mobkit-console-demo', 1)`` to the file's ``meerkat_schema`` ledger
as it creates the file. The ledger holds one row per domain, and MobKit reads only its own
(``mobkit-memory``), so the file stays a valid MobKit file; the runtime never writes that domain,
so a file without the row was not made by ``seed_demo``, and ``demo_activity`` will not touch it.
The check reads the file through the console's read-only connection.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory_panel.simulator.store_writer import StoreWriter
from memory_panel.store.realms import DEMO_LEDGER_DOMAIN, connect_readonly

DEMO_MARKER_VERSION = 1


def mark_demo_realm(writer: StoreWriter) -> None:
    """Stamp a just-created current-format file as a demo realm (one autocommitted INSERT)."""
    writer.conn.execute("INSERT INTO meerkat_schema(domain, version) VALUES (?, ?)",
                        (DEMO_LEDGER_DOMAIN, DEMO_MARKER_VERSION))


def is_demo_realm(path: Path) -> bool:
    """Whether the file at ``path`` carries the demo marker; any unreadable file does not."""
    if not path.is_file():
        return False
    try:
        conn = connect_readonly(path)
    except sqlite3.Error:
        return False
    try:
        row = conn.execute("SELECT version FROM meerkat_schema WHERE domain=?", (DEMO_LEDGER_DOMAIN,)).fetchone()
    except sqlite3.Error:  # an older-format file has no ledger table at all
        return False
    finally:
        conn.close()
    return row is not None
