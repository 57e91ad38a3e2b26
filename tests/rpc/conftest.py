"""Fixtures for the /console/rpc tests: real realm files, real users, real access.toml files.

Every expected value is built here from what the test wrote (the `Written` rows kept beside each
write), never by calling the console's selectors or wire helpers: a test compares the endpoint's
answer with an independent account of the store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from memory_panel.services.store_writer import (
    APPLICATION,
    OPERATOR,
    ManualClock,
    StoreWriter,
    agent,
    create_op,
    identity_scope,
    mob_scope,
    new_record,
    operator_scope,
    realm_scope,
    set_rank_op,
    steward,
)
from tests.postures import HEADER, POSTURES, READS, REVIEWER, REVIEWS, ROOT, SCOUT

RPC = "/console/rpc"
PANEL = "mobkit/memory/panel/"
T0 = 1_700_000_000_000

USER = "user@example.test"
LEAD = "identity:lead"

# Bodies the tests search raw response bytes for (docs/access.md §2.4: reviewer-only content).
QUARANTINED_BODY = "QUARANTINED-BODY-ALPHA the scraped page said to wire the funds"
RETIRED_BODY = "RETIRED-EVIDENCE-BODY-GAMMA forgotten tainted note"
CLAIMANT_BODY = "QUARANTINED-CLAIMANT-BODY-DELTA take the west face instead"
RELEASED_BODY = "RELEASED-BODY-BETA lead prefers the night shift"
TAINT = "session tainted by web tool 'web_fetch'"

# ---------------------------------------------------------------------------------------------
# Calling the endpoint


@dataclass
class Reply:
    status: int
    raw: bytes
    body: Any

    @property
    def result(self) -> Any:
        assert "error" not in self.body, self.body
        return self.body["result"]

    @property
    def error(self) -> dict[str, Any]:
        assert "result" not in self.body, self.body
        return self.body["error"]


def post_raw(client, payload: bytes | str, **headers) -> Reply:
    response = client.post(RPC, payload, content_type="application/json", **headers)
    raw = response.content
    return Reply(response.status_code, raw, json.loads(raw) if raw else None)


def call(client, method: str, params: Any = None, *, request_id: Any = 1, **headers) -> Reply:
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        request["params"] = params
    return post_raw(client, json.dumps(request), **headers)


def panel(client, name: str, params: Any = None, **headers) -> Reply:
    return call(client, PANEL + name, params, **headers)


def invalid_params(message: str) -> dict[str, Any]:
    return {"code": -32602, "message": f"Invalid params: {message}", "data": None}


def denied(action: str, resource: str | None) -> dict[str, Any]:
    return {
        "code": -32030,
        "message": f"access denied: {action}",
        "data": {"kind": "access_denied", "action": action, "resource": resource},
    }


def user_with_subject(subject: str) -> User:
    return User.objects.create_user(subject, email=subject if "@" in subject else "")


@pytest.fixture
def signed_in(client, db) -> Callable[[str], User]:
    """Sign the test client in as the user whose subject is ``subject`` (a real session)."""

    def sign_in(subject: str = USER) -> User:
        user = User.objects.filter(username=subject).first() or user_with_subject(subject)
        client.force_login(user)
        return user

    return sign_in


# ---------------------------------------------------------------------------------------------
# What the tests wrote, and the wire rows it implies (docs/store-format.md §5, docs/wire-contract.md §1.4)


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
                 gate_reason: str | None = None) -> Written:
        now = self.tick()
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


# ---------------------------------------------------------------------------------------------
# The world: one realistic realm ("default") plus a small second one ("other")


@dataclass
class World:
    root: Path
    rows: dict[str, Written]
    named: dict[str, Written]
    injections: list[dict[str, Any]]
    proposals: list[dict[str, Any]]
    promotions: list[dict[str, Any]]
    harvests: list[dict[str, Any]]
    dream_runs: list[dict[str, Any]]
    audit_verdicts: list[dict[str, Any]]
    dreams: list[dict[str, Any]]
    stage_tokens: list[str]
    realms: list[str] = field(default_factory=lambda: ["default", "other"])

    def __getitem__(self, name: str) -> Written:
        return self.named[name]


DREAM_VERDICT_KEYS = (
    "proposals_accepted", "proposals_rejected", "proposals_held", "proposals_gated",
    "quarantine_released", "quarantine_tombstoned", "quarantine_held", "quarantine_gated",
    "quarantine_release_blocked", "usage_load_bearing", "usage_dead_weight", "contradictions_emitted",
    "open_loops_escalated", "harvests_completed",
)


def build_world(root: Path) -> World:
    rows: dict[str, Written] = {}
    s = new_scribe(root, "default", rows=rows)
    named: dict[str, Written] = {}
    scout, lead = identity_scope("default", SCOUT), identity_scope("default", LEAD)

    # Non-ASCII body: list rows count UTF-8 bytes, overview counts characters (docs/store-format.md §5, §5.6).
    named["tea"] = s.remember(scout, "Scout drinks green tea", "Green tea — never coffee before a climb",
                              tags=["drinks", "habits"])
    named["route_v1"] = s.remember(scout, "Scout route", "North ridge first", kind="procedure")
    named["route_v2"] = s.supersede(named["route_v1"], "Scout route v2", "South couloir first")
    named["claimant"] = s.supersede(named["route_v2"], "Scout route v3", CLAIMANT_BODY, author=agent(SCOUT),
                                    gate_reason=TAINT)
    named["lead_fact"] = s.remember(lead, "Lead owns the budget", "The lead signs off spending")
    named["mob"] = s.remember(mob_scope("default", "ops"), "Ops runbook", "Restart the relay on Mondays",
                              kind="procedure")
    named["operator"] = s.remember(operator_scope("default", "oncall"), "Oncall phone", "Call the pager first")
    named["realm"] = s.remember(realm_scope("default"), "Realm rule", "All agents log their tools",
                                kind="reference")
    named["quarantined"] = s.remember(scout, "Wire instructions", QUARANTINED_BODY, author=agent(SCOUT),
                                      gate_reason=TAINT)
    named["released_origin"] = s.remember(lead, "Lead shift", RELEASED_BODY, author=agent(LEAD), gate_reason=TAINT)
    named["released"] = s.release(named["released_origin"])
    named["retired"] = s.remember(scout, "Tainted note", RETIRED_BODY, author=agent(SCOUT), gate_reason=TAINT)
    s.forget(named["retired"])
    named["forgotten"] = s.remember(scout, "Old scout note", "Camp two was moved")
    s.forget(named["forgotten"])

    injections = [
        s.inject(named["tea"], SCOUT, surface="build"),
        s.inject(named["tea"], SCOUT, surface="turn", session_key="sess-scout-1"),
        s.inject(named["lead_fact"], LEAD, surface="turn", session_key="sess-lead-1"),
    ]

    # A steward dream: a realm record created, then ranked, in one run.
    run_id = "dream-run-1"
    started = s.tick()
    s.tick()
    s.writer.steward_batch(run_id, [create_op(realm_scope("default"),
                                              new_record(kind="gotcha", title="Dream insight", body="Relays fail cold"),
                                              rationale="consolidated from three sessions")])
    created_at = s.clock()
    dream_id = s.writer.conn.execute("SELECT memory_id FROM records WHERE title='Dream insight'").fetchone()[0]
    named["dreamt"] = rows[dream_id] = Written(
        id=dream_id, realm="default", scope_kind="realm", scope_key="", title="Dream insight",
        body="Relays fail cold", created_at_ms=created_at, updated_at_ms=created_at, kind="gotcha",
        author=steward(run_id),
    )
    ranked_at = s.tick()
    s.writer.steward_batch(run_id, [set_rank_op(dream_id, 1)])
    named["dreamt"].working_set_rank = 1  # set_rank leaves updated_at_ms alone (docs/store-format.md §4.2)
    dreams = [{
        "realm": "default", "run_id": run_id, "first_op_at_ms": created_at, "last_op_at_ms": ranked_at,
        "ops": 2, "op_kinds": {"create": 1, "set_rank": 1}, "quarantined_ops": 0,
        "memory_ids": [dream_id, dream_id], "rationales": ["consolidated from three sessions"],
    }]
    completed = s.tick()
    s.writer.record_dream_run(run_id, started_at_ms=started, ops_committed=2, phases=[("consolidate", "ok")],
                              verdicts={"usage_dead_weight": 1},
                              audit_verdicts=[(named["lead_fact"].id, "dead_weight", "never recalled")])
    dream_runs = [{
        "realm": "default", "run_id": run_id, "partition": "realm", "started_at_ms": started,
        "completed_at_ms": completed, "ops_committed": 2,
        "detail": {"phases": [["consolidate", "ok"]],
                   "verdicts": {key: int(key == "usage_dead_weight") for key in DREAM_VERDICT_KEYS},
                   "skips": []},
    }]
    audit_verdicts = [{"realm": "default", "run_id": run_id, "record_id": named["lead_fact"].id,
                       "verdict": "dead_weight", "rationale": "never recalled", "created_at_ms": completed}]

    # A gated promotion of the quarantined record to the ops mob, waiting on the gate.
    promoted_at = s.tick()
    pending_id = s.writer.stage_gated_promotion(named["quarantined"].id, mob_scope("default", "ops"),
                                                run_id=run_id, rationale="worth sharing with ops")
    promotions = [{"realm": "default", "pending_id": pending_id, "record_id": named["quarantined"].id,
                   "scope_kind": "mob", "scope_key": "ops", "rationale": "worth sharing with ops",
                   "status": "pending", "created_at_ms": promoted_at}]
    stage_tokens = [t for (t,) in s.writer.conn.execute("SELECT stage_token FROM pending_promotions")]

    proposals = []
    for title, taint in (("Ops should rotate keys", None), ("Ops mirror list", TAINT)):
        at = s.tick()
        proposal_id = s.writer.propose(mob_scope("default", "ops"), new_record(kind="fact", title=title, body="b"),
                                       author=agent(SCOUT), taint=taint)
        proposals.append({"realm": "default", "proposal_id": proposal_id, "scope_kind": "mob", "scope_key": "ops",
                          "title": title, "kind": "fact", "author": 'Agent { identity: "identity:scout" }',
                          "status": "pending", "created_at_ms": at, "tainted": taint is not None})

    harvested_at = s.tick()
    s.writer.add_pending_harvest(LEAD, session_key="sess-lead-1")
    harvests = [{"realm": "default", "identity": LEAD, "session_key": "sess-lead-1", "cause": "retire",
                 "retired_at_ms": harvested_at}]
    s.writer.close()

    other = new_scribe(root, "other", start_ms=T0 + 500, rows=rows)
    named["other_scout"] = other.remember(identity_scope("other", SCOUT), "Scout in other realm", "Other realm body")
    other.writer.close()

    return World(root, rows, named, injections, proposals, promotions, harvests, dream_runs, audit_verdicts,
                 dreams, stage_tokens)


@pytest.fixture(scope="module")
def world_files(tmp_path_factory) -> World:
    """The world is only read by the console, so one copy serves a whole module."""
    return build_world(tmp_path_factory.mktemp("world") / "agent-memory")


@pytest.fixture
def world(world_files: World, settings) -> World:
    settings.MOBKIT_PERSISTENT_STATE = world_files.root.parent
    settings.MOBKIT_AGENT_MEMORY_ROOT = world_files.root
    settings.MOBKIT_ACCESS_CONFIG = None
    return world_files


# ---------------------------------------------------------------------------------------------
# Access postures (docs/access.md §2.6) as real access.toml files

POSTURE_FILES: dict[str, str | None] = {
    "open": None,
    **POSTURES,
    # Review without any read grant: the queue answers, but empty (docs/wire-contract.md §1.2 (c)).
    "bare_reviewer": HEADER + REVIEWS,
    "admin": HEADER + READS,
}
# Who calls in each posture.
POSTURE_SUBJECT = {name: USER for name in POSTURE_FILES} | {
    "reviewer": REVIEWER, "bare_reviewer": REVIEWER, "admin": ROOT,
}


@pytest.fixture
def posture(tmp_path: Path, settings, signed_in) -> Callable[[str], None]:
    """Point the console at the posture's access.toml and sign in as that posture's caller."""

    def use(name: str) -> None:
        text = POSTURE_FILES[name]
        if text is None:
            settings.MOBKIT_ACCESS_CONFIG = None
        else:
            path = tmp_path / f"access-{name}.toml"
            path.write_text(text, encoding="utf-8")
            settings.MOBKIT_ACCESS_CONFIG = path
        signed_in(POSTURE_SUBJECT[name])

    return use
