"""The per-record facts the Holdings verdict tiles count, as SQL over one realm file.

docs/panel-tiles.md defines each tile's rule; the rules that single out records are here, one
statement, so the direct read of a small realm and the console's realm index (which stores the
same facts at build and catch-up time) flag exactly the same rows.

A fact is ``(fact, memory_id, scope_kind, scope_key, status_kind)``. Facts are rare by design
(they are what is wrong, or close to it), so the index keeps them as rows, not as columns on
every entry.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

# fact name → the tile it feeds and the state it puts that tile in.
FACTS: dict[str, tuple[str, str]] = {
    "lattice.ceiling": ("lattice", "violated"),
    "lattice.dangling": ("lattice", "degraded"),
    "recall.leak": ("recall", "violated"),
    "recall.dead": ("recall", "degraded"),
    "taint.unreviewed": ("taint-wall", "violated"),
    "echo.active": ("echo-safety", "violated"),
    "echo.held": ("echo-safety", "degraded"),
}

LLM_AUTHORS = "('agent', 'steward', 'distiller')"
ABOVE_OBSERVED = "('agent_verified', 'application', 'operator')"
DEAD_INJECTIONS = 3  # docs/panel-tabs.md §3: DEAD = injected ≥ 3 and never judged useful


def usage_sql(field: str) -> str:
    """One ``usage_stats`` counter of the row ``r``, as SQL."""
    # docs/store-format.md §2: bad usage JSON reads as the default (zero counters).
    return f"(CASE WHEN json_valid(r.usage_stats) THEN COALESCE(json_extract(r.usage_stats, '$.{field}'), 0) ELSE 0 END)"


def _author() -> str:
    return "(CASE WHEN json_valid(r.provenance) THEN json_extract(r.provenance, '$.author.author') END)"


def _conditions(ever_quarantined: str, has_pending_promotions: bool, db: str) -> dict[str, str]:
    gate_commits = (
        f" OR a.stage_token IN (SELECT stage_token FROM {db}.pending_promotions WHERE status = 'committed')"
        if has_pending_promotions
        else ""
    )
    echo = (
        f"{_author()} IN {LLM_AUTHORS} AND EXISTS (SELECT 1 FROM json_each(r.provenance, '$.evidence') e"
        " JOIN injected ON injected.session_key = json_extract(e.value, '$.session_id')"
        " WHERE injected.content_hash = r.content_hash AND injected.memory_id != r.memory_id"
        " AND injected.at_ms <= r.created_at_ms)"
    )
    return {
        # An LLM author never holds a tier above agent_observed, except a steward retier to
        # agent_verified backed by a verification claim; nothing ever quarantined rises above it.
        "lattice.ceiling": (
            f"(({_author()} IN {LLM_AUTHORS} AND (r.trust IN ('application', 'operator')"
            " OR (r.trust = 'agent_verified' AND json_extract(r.provenance, '$.verification') IS NULL)))"
            f" OR ({ever_quarantined} = 1 AND r.trust IN {ABOVE_OBSERVED}))"
        ),
        "lattice.dangling": (
            f"r.supersedes IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {db}.records p WHERE p.memory_id = r.supersedes)"
        ),
        # Quarantined rows are write-only (docs/store-format.md §7.2): an injection of one, or of a
        # tombstoned row after its tombstone, is recall reading what it must not.
        "recall.leak": (
            f"r.status_kind IN ('quarantined', 'tombstoned') AND EXISTS (SELECT 1 FROM {db}.injections i"
            " WHERE i.record_id = r.memory_id AND (r.status_kind = 'quarantined'"
            " OR (r.tombstoned_at_ms IS NOT NULL AND i.at_ms > r.tombstoned_at_ms)))"
        ),
        "recall.dead": (
            f"r.status_kind = 'active' AND {usage_sql('injected_count')} >= {DEAD_INJECTIONS}"
            f" AND {usage_sql('judged_useful_count')} = 0"
        ),
        # Active and ever quarantined, yet no review put it there: neither a review batch
        # (audit.detail.review) nor a committed promotion gate wrote it.
        "taint.unreviewed": (
            f"r.status_kind = 'active' AND {ever_quarantined} = 1 AND NOT EXISTS (SELECT 1 FROM {db}.audit a"
            " WHERE a.memory_id = r.memory_id AND a.op_kind IN ('create', 'supersede')"
            f" AND ((json_valid(a.detail) AND json_extract(a.detail, '$.review') IS NOT NULL){gate_commits}))"
        ),
        "echo.active": f"r.status_kind = 'active' AND {echo}",
        "echo.held": f"r.status_kind != 'active' AND {echo}",
    }


# What was injected into which session, with the injected text's hash: ECHO-SAFETY's other side.
_INJECTED = (
    "injected AS MATERIALIZED (SELECT i.session_key, i.at_ms, s.content_hash, s.memory_id"
    " FROM {db}.injections i JOIN {db}.records s ON s.memory_id = i.record_id WHERE i.session_key IS NOT NULL)"
)


def fact_rows(
    cursor: Any, *, ids: Iterable[str] | None = None, placeholder: str = "?", db: str = "main"
) -> list[tuple[str, str, str, str, str]]:
    """Every fact of the realm, or of the records ``ids`` only.

    ``cursor`` is a DB-API cursor on the realm: a Django realm cursor (``placeholder="%s"``, under
    the realm query deadline), the index's catch-up connection, or an index build's connection with
    the realm attached as ``db`` (docs/realm-index.md §5).
    """
    # The older store format has no ever_quarantined column (docs/store-format.md §1.3): it reads as 0.
    cursor.execute(
        f"SELECT EXISTS (SELECT 1 FROM pragma_table_info('records', '{db}') WHERE name = 'ever_quarantined'),"
        f" EXISTS (SELECT 1 FROM {db}.sqlite_master WHERE type = 'table' AND name = 'pending_promotions')"
    )
    has_ever_quarantined, has_pending_promotions = cursor.fetchone()
    conditions = _conditions("r.ever_quarantined" if has_ever_quarantined else "0", bool(has_pending_promotions), db)
    only = f"r.memory_id IN (SELECT value FROM json_each({placeholder})) AND " if ids is not None else ""
    # One pass over the records finds the few with any fact (a WHERE of ORs stops at the first
    # that holds); each fact's rule then runs on those alone: at 1 M records 1.0 s of CPU, where
    # a pass per fact took 2.1 s.
    candidates = (
        f"candidate AS MATERIALIZED (SELECT r.rowid AS id FROM {db}.records r"
        f" WHERE {only}({' OR '.join(conditions.values())}))"
    )
    selects = [
        f"SELECT '{fact}', r.memory_id, r.scope_kind, r.scope_key, r.status_kind FROM candidate c"
        f" CROSS JOIN {db}.records r ON r.rowid = c.id WHERE {condition}"
        for fact, condition in conditions.items()
    ]
    args = [json.dumps(list(ids))] if ids is not None else []
    cursor.execute(f"WITH {_INJECTED.format(db=db)}, {candidates} " + " UNION ALL ".join(selects), args)
    return [tuple(row) for row in cursor.fetchall()]
