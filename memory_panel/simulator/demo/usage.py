"""How the demo marks a record useful without breaking its counters (docs/demo.md §5)."""

from __future__ import annotations

import json

from memory_panel.simulator.store_writer import StoreWriter


def judge_useful(w: StoreWriter, record_id: str) -> bool:
    """Count one ``judged_useful`` only while the record has been put in front of an agent more
    often than it was judged useful: a record cannot prove useful more often than it was injected
    or recalled. Returns whether it was counted."""
    row = w.conn.execute("SELECT usage_stats FROM records WHERE memory_id=?", (record_id,)).fetchone()
    try:
        stats = json.loads(row[0]) if row else {}
    except ValueError:
        stats = {}
    stats = stats if isinstance(stats, dict) else {}
    seen = int(stats.get("injected_count") or 0) + int(stats.get("explicit_recall_count") or 0)
    if int(stats.get("judged_useful_count") or 0) >= seen:
        return False
    w.mark_usage(record_id, "judged_useful")
    return True
