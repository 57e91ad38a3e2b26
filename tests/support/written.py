"""The tests' own account of what they wrote, and the wire rows it implies.

Every expected value is built here from what the test wrote (the ``Written`` rows kept beside each
write), never by calling the console's selectors or wire helpers: a test compares the console's
answer with an independent account of the store (docs/store-format.md §5, docs/wire-contract.md §1.4).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memory_panel.simulator.store_writer import APPLICATION, OPERATOR, ManualClock, StoreWriter
from tests.support.postures import ROOT

T0 = 1_700_000_000_000
TAINT = "session tainted by web tool 'web_fetch'"


def sha256_content(title: str, body: str) -> str:
    """docs/store-format.md §4.4, restated: u64-LE title length, title bytes, body bytes."""
    t = title.encode("utf-8")
    return hashlib.sha256(len(t).to_bytes(8, "little") + t + body.encode("utf-8")).hexdigest()


def fresh_usage() -> dict[str, int]:
    return {"injected_count": 0, "explicit_recall_count": 0, "judged_useful_count": 0}


@dataclass
class Written:
    """One records row as the test wrote it (and then changed it)."""

    id: str
    realm: str
    scope_kind: str
    scope_key: str
    title: str
    body: str
    created_at_ms: int
    updated_at_ms: int
    kind: str = "fact"
    tags: list[str] = field(default_factory=list)
    author: dict[str, Any] = field(default_factory=lambda: dict(APPLICATION))
    trust: str = "agent_observed"
    status: dict[str, Any] = field(default_factory=lambda: {"status": "active"})
    supersedes: str | None = None
    derived_from: list[str] = field(default_factory=list)
    working_set_rank: int | None = None
    usage: dict[str, int] = field(default_factory=fresh_usage)
    ever_quarantined: bool = False
    description: str = ""

    @property
    def status_kind(self) -> str:
        return self.status["status"]

    @property
    def cursor(self) -> str:
        return f"{self.updated_at_ms}:{self.id}"

    def scope_json(self) -> dict[str, str]:
        if self.scope_kind == "realm":
            return {"scope": "realm", "realm": self.realm}
        return {"scope": self.scope_kind, "realm": self.realm, self.scope_kind: self.scope_key}

    def _wire(self, body_field: dict[str, Any]) -> dict[str, Any]:
        row: dict[str, Any] = {
            "id": self.id,
            "scope": self.scope_json(),
            "kind": self.kind,
            "title": self.title,
            "description": self.description,
            **body_field,
            "tags": self.tags,
            "provenance": {"evidence": [], "author": self.author},
            "trust": self.trust,
            "status": self.status,
        }
        if self.supersedes is not None:
            row["supersedes"] = self.supersedes
        row["derived_from"] = self.derived_from
        if self.working_set_rank is not None:
            row["working_set_rank"] = self.working_set_rank
        row.update(
            created_at_ms=self.created_at_ms,
            updated_at_ms=self.updated_at_ms,
            usage=self.usage,
            ever_quarantined=self.ever_quarantined,
        )
        return row

    def list_row(self) -> dict[str, Any]:
        """A ListRow: the record without ``body``, with its UTF-8 byte length."""
        return self._wire({"body_bytes": len(self.body.encode("utf-8"))})

    def full(self) -> dict[str, Any]:
        return {**self._wire({"body": self.body}), "content_hash": sha256_content(self.title, self.body)}


def newest_first(rows: Iterable[Written]) -> list[Written]:
    """docs/store-format.md §5.1: updated_at_ms descending, ties broken by id descending."""
    return sorted(rows, key=lambda r: (r.updated_at_ms, r.id), reverse=True)


def reviewer_only(row: Written) -> bool:
    """Quarantined rows and retired quarantine evidence (docs/store-format.md §5.5)."""
    return row.status_kind == "quarantined" or (row.status_kind == "tombstoned" and row.ever_quarantined)


class Scribe:
    """Writes through the store writer and keeps a `Written` account of every row it touches."""

    def __init__(self, writer: StoreWriter, clock: ManualClock, rows: dict[str, Written]) -> None:
        self.writer = writer
        self.clock = clock
        self.rows = rows
        self.realm = writer.realm

    def tick(self, ms: int = 1000) -> int:
        return self.clock.advance(ms)

    def remember(self, scope: dict[str, Any], title: str, body: str, *, kind: str = "fact",
                 tags: list[str] | None = None, author: dict[str, Any] = APPLICATION,
                 gate_reason: str | None = None, advance_ms: int = 1000) -> Written:
        """``advance_ms=0`` leaves the clock still, so updated_at_ms ties with the previous write."""
        now = self.tick(advance_ms)
        memory_id = self.writer.remember(scope, title, body, kind=kind, tags=tags or [], author=author,
                                         gate_reason=gate_reason)
        kind_of_scope = scope["scope"]
        row = Written(
            id=memory_id, realm=self.realm, scope_kind=kind_of_scope,
            scope_key="" if kind_of_scope == "realm" else scope[kind_of_scope],
            title=title, body=body, created_at_ms=now, updated_at_ms=now, kind=kind,
            tags=sorted(tags or []), author=dict(author),
            status={"status": "quarantined", "reason": gate_reason} if gate_reason else {"status": "active"},
            ever_quarantined=gate_reason is not None and self.writer.has_ever_quarantined,
        )
        self.rows[memory_id] = row
        return row

    def supersede(self, prior: Written, title: str, body: str, *, author: dict[str, Any] = APPLICATION,
                  gate_reason: str | None = None) -> Written:
        now = self.tick()
        memory_id = self.writer.supersede(prior.id, title, body, author=author, gate_reason=gate_reason)
        # docs/store-format.md §4.2: the successor keeps the prior's scope, kind and tags; fresh usage.
        row = replace(prior, id=memory_id, title=title, body=body, created_at_ms=now, updated_at_ms=now,
                      supersedes=prior.id, derived_from=[], author=dict(author), usage=fresh_usage(),
                      status={"status": "quarantined", "reason": gate_reason} if gate_reason else {"status": "active"},
                      ever_quarantined=gate_reason is not None)
        self.rows[memory_id] = row
        if gate_reason is None:  # a quarantined supersede leaves the prior active: a claimant (§4.2)
            prior.status = {"status": "superseded", "by": memory_id}
            prior.updated_at_ms = now
        return row

    def forget(self, row: Written) -> None:
        now = self.tick()
        assert self.writer.forget(row.id)
        row.status = {"status": "tombstoned"}
        row.updated_at_ms = now

    def release(self, origin: Written) -> Written:
        """An operator's quarantine release (docs/store-format.md §7.4)."""
        now = self.tick()
        result = self.writer.review_quarantine(origin.id, "release", reviewer={"kind": "operator", "principal": ROOT})
        successor = Written(
            id=f"{origin.id}-released", realm=self.realm, scope_kind=origin.scope_kind,
            scope_key=origin.scope_key, title=origin.title, body=origin.body, created_at_ms=now,
            updated_at_ms=now, kind=origin.kind, tags=list(origin.tags), author=dict(OPERATOR),
            derived_from=[origin.id], ever_quarantined=True,
        )
        assert result.successor == successor.id
        origin.status = {"status": "tombstoned"}
        origin.updated_at_ms = now
        self.rows[successor.id] = successor
        return successor

    def inject(self, row: Written, identity: str, *, surface: str, session_key: str | None = None) -> dict[str, Any]:
        at = self.tick()
        self.writer.record_injection(row.id, identity, surface=surface, session_key=session_key, at_ms=at)
        row.usage = {**row.usage, "injected_count": row.usage["injected_count"] + 1, "last_injected_at_ms": at}
        return {"realm": self.realm, "record_id": row.id, "identity": identity, "session_key": session_key,
                "surface": surface, "at_ms": at}


def new_scribe(root: Path, realm: str, *, fmt: str = "current", start_ms: int = T0,
               rows: dict[str, Written] | None = None) -> Scribe:
    clock = ManualClock(start_ms)
    writer = StoreWriter.create(realm, root=root, format=fmt, clock=clock)
    return Scribe(writer, clock, rows if rows is not None else {})



FLOOR_RECORDS = 4000
FLOOR_BYTES = 33_554_432


def overview_rows(rows: list[Written]) -> list[dict]:
    """docs/store-format.md §5.6: per (realm, scope) status counts; body_bytes is SQLite LENGTH (characters)."""
    buckets: dict[tuple, dict] = {}
    for row in rows:
        key = (row.realm, row.scope_kind, row.scope_key)
        bucket = buckets.setdefault(key, {"active": 0, "quarantined": 0, "superseded": 0, "tombstoned": 0,
                                          "body_bytes": 0})
        bucket[row.status_kind] += 1
        bucket["body_bytes"] += len(row.body)
    order = {"identity": 0, "mob": 1, "operator": 2, "realm": 3}
    out = [
        {"realm": realm, "scope_kind": kind, "scope_key": key, **counts,
         "floor_pressure": counts["active"] >= FLOOR_RECORDS or counts["body_bytes"] >= FLOOR_BYTES}
        for (realm, kind, key), counts in buckets.items()
    ]
    return sorted(out, key=lambda s: (order[s["scope_kind"]], s["realm"], s["scope_key"]))
