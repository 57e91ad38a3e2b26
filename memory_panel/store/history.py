"""A realm's history, replayed from its audit rows: what each record was at any moment (docs/history.md §3).

Every write is a batch whose ops leave one audit row each, with the batch's one ``applied_at_ms``
(docs/store-format.md §4.1); ops change a record's status as docs/store-format.md §4.2 and §7.4
say. Replaying the rows in ``audit_id`` order gives each record's status changes with their times.
The replay is kept, and checked against the records as they are now, by
``memory_panel/store/history_file.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_panel.errors import HistoryUnavailable
from memory_panel.store.realms import store_format

# What happened to a record at one moment (docs/history.md §3).
ADDED, SUPERSEDED, TOMBSTONED, QUARANTINED, RELEASED = "added", "superseded", "tombstoned", "quarantined", "released"
CHANGE_KINDS = (ADDED, SUPERSEDED, TOMBSTONED, QUARANTINED, RELEASED)


@dataclass(frozen=True, slots=True)
class Change:
    """One record's status change: ``status`` (and ``status_detail``) from ``at_ms`` on.

    ``other_id`` names the record the change involves: the successor of a superseded record, the
    successor a release made, or the prior a new version superseded.
    """

    at_ms: int
    audit_id: int
    memory_id: str
    kind: str
    status: str
    status_detail: str | None = None
    other_id: str | None = None


# The audit columns the replay needs, the JSON fields read by SQLite (a row whose detail is not
# JSON has none of them), with the facts of the row's record and of the prior a supersede names,
# and last their rowids.
AUDIT_SQL = (
    "SELECT a.audit_id, a.op_kind, a.memory_id, a.applied_at_ms,"
    " CASE WHEN json_valid(a.detail) THEN json_extract(a.detail, '$.quarantined') END,"
    " CASE WHEN json_valid(a.detail) THEN json_extract(a.detail, '$.review.verdict') END,"
    " CASE WHEN json_valid(a.detail) THEN json_extract(a.detail, '$.review.origin') END,"
    " CASE WHEN json_valid(a.detail) THEN json_extract(a.detail, '$.review.successor') END,"
    " r.supersedes, r.scope_kind, r.scope_key, r.kind, {ever_r}, LENGTH(CAST(r.body AS BLOB)),"
    " p.scope_kind, p.scope_key, p.kind, {ever_p}, LENGTH(CAST(p.body AS BLOB)), r.rowid, p.rowid"
    " FROM audit a LEFT JOIN records r ON r.memory_id = a.memory_id"
    " LEFT JOIN records p ON a.op_kind = 'supersede' AND p.memory_id = r.supersedes"
    " WHERE a.audit_id > ? AND a.audit_id <= ? AND a.op_kind IN ('create', 'supersede', 'tombstone')"
    " ORDER BY a.audit_id"
)


def audit_sql(has_ever_quarantined: bool) -> str:
    """``AUDIT_SQL`` for a file with or without the ``ever_quarantined`` column."""
    return AUDIT_SQL.format(ever_r="r.ever_quarantined" if has_ever_quarantined else "0",
                            ever_p="p.ever_quarantined" if has_ever_quarantined else "0")


def op_changes(audit_id: int, op: str, memory_id: str | None, at_ms: int, reason: Any, verdict: Any, origin: Any,
               successor: Any, prior: str | None) -> list[Change]:
    """docs/store-format.md §4.2 and §7.4: the status changes one audit row made (``prior``: the
    record a supersede's new version names)."""
    if not memory_id:
        return []
    if op == "tombstone":
        # The origin of a release is tombstoned by the release's own batch (a review rides on every row).
        released = verdict == "release" and origin == memory_id
        return [Change(at_ms, audit_id, memory_id, RELEASED if released else TOMBSTONED, "tombstoned",
                       other_id=successor if released and isinstance(successor, str) else None)]
    if reason:
        return [Change(at_ms, audit_id, memory_id, QUARANTINED, "quarantined", str(reason))]
    prior = prior if op == "supersede" else None
    changes = [Change(at_ms, audit_id, memory_id, ADDED, "active", other_id=prior)]
    if prior:
        changes.append(Change(at_ms, audit_id, prior, SUPERSEDED, "superseded", memory_id, other_id=memory_id))
    return changes


def older_format(realm: str) -> HistoryUnavailable | None:
    """A file of the older format is refused: its reviews leave no ``review`` in the audit rows."""
    fmt = store_format(realm)
    if not fmt.has("meerkat_schema") or not fmt.has("audit"):
        return HistoryUnavailable(realm, "the realm file is of the older format, whose audit rows do not record "
                                        "quarantine reviews")
    return None
