"""Each record's place in the utility order, read from one realm file (docs/panel-tabs.md §3).

Both the direct read of a small realm (``utility_rows``) and the console's realm index (its
``entries.utility`` rank, docs/realm-index.md §3) rank rows with ``utility_rank_of``, so a utility
page means the same on both paths.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memory_panel.cursor import ORDER_MS, ranked_utility_key, utility_rank
from memory_panel.store.records import AUTHOR_KIND
from memory_panel.store.tile_facts import usage_sql

UTILITY_COLUMNS = ("utility_key", "memory_id", "scope_kind", "scope_key", "status_kind", "kind", "trust", "author")
# The usage counters of the row ``r`` the utility order reads, then its body in bytes.
USAGE_COLUMNS = f"{usage_sql('injected_count')}, {usage_sql('judged_useful_count')}"


def utility_rank_of(*, injected: Any, useful: Any, body_bytes: Any, updated_at_ms: int) -> int:
    """The utility rank of one row's ``USAGE_COLUMNS``, ``LENGTH(CAST(body AS BLOB))`` and order key."""
    return utility_rank(
        injected=int(injected or 0), useful=int(useful or 0), body_bytes=int(body_bytes or 0), updated_at_ms=updated_at_ms
    )


def utility_rows(cursor: Any, *, batch: int = 20_000) -> Iterable[tuple[str, str, str, str, str, str, str, str]]:
    """``UTILITY_COLUMNS`` for every record of the realm, in no particular order."""
    sql = (
        f"SELECT r.memory_id, {USAGE_COLUMNS},"
        # The order key of docs/store-format.md §5.1 as the index keeps it: a hand-damaged
        # updated_at_ms (text, float, negative) sorts as 0, the same as it decodes.
        f" LENGTH(CAST(r.body AS BLOB)), {ORDER_MS}, r.scope_kind, r.scope_key, r.status_kind, r.kind, r.trust,"
        f" {AUTHOR_KIND} FROM records r"
    )
    cursor.execute(sql)
    while rows := cursor.fetchmany(batch):
        for memory_id, injected, useful, body_bytes, updated, *rest in rows:
            rank = utility_rank_of(injected=injected, useful=useful, body_bytes=body_bytes, updated_at_ms=updated)
            yield (ranked_utility_key(rank, memory_id), memory_id, *rest)
