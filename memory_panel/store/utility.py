"""Each record's place in the utility order, read from one realm file (docs/panel-tabs.md §3).

Both the direct read of a small realm and the console's realm index (its ``utility`` table) take
their keys from ``utility_rows``, so a utility page means the same on both paths.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from memory_panel.cursor import ORDER_MS, utility_key
from memory_panel.store.tile_facts import usage_sql

UTILITY_COLUMNS = ("utility_key", "memory_id", "scope_kind", "scope_key", "status_kind", "kind", "trust")


def utility_rows(
    cursor: Any, *, ids: Iterable[str] | None = None, placeholder: str = "?", batch: int = 20_000
) -> Iterable[tuple[str, str, str, str, str, str, str]]:
    """``UTILITY_COLUMNS`` for every record of the realm (or of ``ids``), in no particular order."""
    sql = (
        f"SELECT r.memory_id, {usage_sql('injected_count')}, {usage_sql('judged_useful_count')},"
        # The order key of docs/store-format.md §5.1 as the index keeps it: a hand-damaged
        # updated_at_ms (text, float, negative) sorts as 0, the same as it decodes.
        f" LENGTH(CAST(r.body AS BLOB)), {ORDER_MS}, r.scope_kind, r.scope_key, r.status_kind, r.kind, r.trust"
        " FROM records r"
    )
    args: list = []
    if ids is not None:
        sql += f" WHERE r.memory_id IN (SELECT value FROM json_each({placeholder}))"
        args.append(json.dumps(list(ids)))
    cursor.execute(sql, args)
    while rows := cursor.fetchmany(batch):
        for memory_id, injected, useful, body_bytes, updated, *rest in rows:
            key = utility_key(
                injected=int(injected or 0),
                useful=int(useful or 0),
                body_bytes=int(body_bytes or 0),
                updated_at_ms=updated,
                memory_id=memory_id,
            )
            yield (key, memory_id, *rest)
