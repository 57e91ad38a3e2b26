"""A realm's history, replayed from its audit rows: what each record was at any moment (docs/history.md §3).

Every write is a batch whose ops leave one audit row each, with the batch's one ``applied_at_ms``
(docs/store-format.md §4.1); ops change a record's status as docs/store-format.md §4.2 and §7.4
say. Replaying the rows in ``audit_id`` order gives each record's status changes with their times.
The replay is checked against the records as they are now: when it does not end where the file
stands (audit rows missing, a hand edit) or the file is of the older format (its reviews leave no
``review`` in the audit), the history is refused rather than guessed.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from memory_panel.errors import HistoryUnavailable
from memory_panel.store.realm_memo import realm_memo
from memory_panel.store.realms import store_format
from memory_panel.store.rows import realm_cursor

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


@dataclass(frozen=True, slots=True)
class RecordFacts:
    """What the pages at a moment decide on before any row is decoded: scope, kind, the quarantine
    flag (set at insert, never changed) and the body's size in UTF-8 bytes."""

    memory_id: str
    scope_kind: str
    scope_key: str
    kind: str
    ever_quarantined: bool
    body_bytes: int


@dataclass
class RealmHistory:
    """Every status change of a realm's records, in audit order, and each record's facts."""

    changes: list[Change] = field(default_factory=list)
    facts: dict[str, RecordFacts] = field(default_factory=dict)
    _at: list[int] = field(default_factory=list)  # changes' at_ms, ascending in audit order

    def state_at(self, at_ms: int) -> dict[str, Change]:
        """Each record that existed at ``at_ms`` (inclusive), by its last change then: its status
        then is that change's."""
        return {change.memory_id: change for change in self.changes[: self._last_index(at_ms)]}

    def between(self, from_ms: int, to_ms: int) -> list[Change]:
        """The changes after ``from_ms`` up to ``to_ms`` (inclusive), oldest first."""
        return self.changes[self._last_index(from_ms) : self._last_index(to_ms)]

    def _last_index(self, at_ms: int) -> int:
        # Times follow audit order except across a clock step back; one index keeps the replay's order.
        return bisect.bisect_right(self._at, at_ms)


def realm_history(realm: str) -> RealmHistory:
    """The realm's history, kept while its file stands still. Raises ``HistoryUnavailable``."""
    history = realm_memo(realm, "history", partial(_replayed, realm))
    if isinstance(history, HistoryUnavailable):
        raise history
    return history


# The audit columns the replay needs, the JSON fields read by SQLite (a row whose detail is not
# JSON has none of them): parsing every detail in Python was most of a large realm's replay.
_AUDIT_SQL = (
    "SELECT audit_id, stage_token, op_kind, memory_id, applied_at_ms,"
    " CASE WHEN json_valid(detail) THEN json_extract(detail, '$.quarantined') END,"
    " CASE WHEN json_valid(detail) THEN json_extract(detail, '$.review.verdict') END,"
    " CASE WHEN json_valid(detail) THEN json_extract(detail, '$.review.origin') END,"
    " CASE WHEN json_valid(detail) THEN json_extract(detail, '$.review.successor') END"
    " FROM audit WHERE op_kind IN ('create', 'supersede', 'tombstone') ORDER BY audit_id"
)


# docs/history.md §3: a kept replay costs about 650 bytes a record (100,000 records: 65 MB), so a
# larger realm is refused, said so, rather than holding gigabytes per realm.
HISTORY_MAX_RECORDS = 250_000


def _replayed(realm: str) -> RealmHistory | HistoryUnavailable:
    fmt = store_format(realm)
    if not fmt.has("meerkat_schema") or not fmt.has("audit"):
        return HistoryUnavailable(realm, "the realm file is of the older format, whose audit rows do not record "
                                        "quarantine reviews")
    ever = "ever_quarantined" if fmt.has_ever_quarantined else "0"
    cursor = realm_cursor(realm)
    try:
        count = cursor.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        if count > HISTORY_MAX_RECORDS:
            return HistoryUnavailable(realm, f"it holds {count:,} records; the console replays the history of "
                                             f"realms of at most {HISTORY_MAX_RECORDS:,}")
        rows = cursor.execute(
            "SELECT memory_id, supersedes, status_kind, status_detail, scope_kind, scope_key, kind,"
            f" {ever}, LENGTH(CAST(body AS BLOB)) FROM records").fetchall()
        records = {row[0]: row[1:4] for row in rows}
        history = _replay(cursor.execute(_AUDIT_SQL), records)
    finally:
        cursor.close()
    history.facts = {row[0]: RecordFacts(row[0], *row[4:]) for row in rows}
    problem = _disagreement(history, records)
    return HistoryUnavailable(realm, problem) if problem else history


def _replay(rows: Any, records: dict[str, tuple]) -> RealmHistory:
    """docs/store-format.md §4.2 and §7.4: the status changes each op made, in audit order."""
    history = RealmHistory()
    add = history.changes.append
    for audit_id, _, op, memory_id, at_ms, reason, verdict, origin, successor in rows:
        if not memory_id:
            continue
        if op == "tombstone":
            # The origin of a release is tombstoned by the release's own batch (a review rides on every row).
            released = verdict == "release" and origin == memory_id
            add(Change(at_ms, audit_id, memory_id, RELEASED if released else TOMBSTONED, "tombstoned",
                       other_id=successor if released and isinstance(successor, str) else None))
        elif reason:
            add(Change(at_ms, audit_id, memory_id, QUARANTINED, "quarantined", str(reason)))
        else:
            prior = (records.get(memory_id) or (None,))[0] if op == "supersede" else None
            add(Change(at_ms, audit_id, memory_id, ADDED, "active", other_id=prior))
            if prior:
                add(Change(at_ms, audit_id, prior, SUPERSEDED, "superseded", memory_id, other_id=memory_id))
    history._at = [change.at_ms for change in history.changes]
    # A clock that stepped back leaves times out of order; the moment a change is placed at is
    # then the latest time of any change before it, so the replay's order is kept.
    for index in range(1, len(history._at)):
        history._at[index] = max(history._at[index], history._at[index - 1])
    return history


def _disagreement(history: RealmHistory, records: dict[str, tuple]) -> str | None:
    """Why the replay does not end where the file stands, or None when it does."""
    final = {change.memory_id: change for change in history.changes}
    missing = [memory_id for memory_id in records if memory_id not in final]
    if missing:
        return f"{len(missing)} record(s) have no audit row of their write (audit rows missing)"
    differ = [memory_id for memory_id, (_, status, detail) in records.items()
              if (final[memory_id].status, final[memory_id].status_detail if status == "superseded" else None)
              != (status, detail if status == "superseded" else None)]
    if differ:
        return f"{len(differ)} record(s) stand otherwise than their audit rows say (audit rows missing or edited)"
    return None
