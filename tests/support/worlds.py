"""The realm worlds the tests read: real SQLite realm files written through the store writer.

One module, parametrised recipes over one clock-driven writer:

- ``build_world(root)``: the RPC world, a realistic realm ``default`` and a small ``other``, with
  every row kept as ``Written`` so expected wire results come from the test's own account.
- ``write_panel_realm(root, name, hostile=)``: a realm whose per-scope counts the Memory panel
  pages can count exactly; ``hostile`` puts script and attribute breakers in every free-text column.
- ``write_notes(root, realm, count, ...)``: ``count`` plain records whose timestamps tie in runs
  (cursor walks, counts, realm formats), optionally spread over scopes and quarantine.
- ``write_retired_successor(writer)``: a superseded fact whose successor only reviewers may read.
- ``write_reviewer_only_records(writer)``: one record of each reviewer-only kind, and the readable
  successor of a release.
- ``RealmWriterFactory``: fresh ``StoreWriter`` realms sharing one ``ManualClock``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_panel.simulator.store_writer import (
    APPLICATION,
    ManualClock,
    StoreWriter,
    agent,
    create_op,
    evidence_ref,
    identity_scope,
    mob_scope,
    new_record,
    operator_scope,
    realm_scope,
    set_rank_op,
    steward,
    verification_claim,
)
from tests.support.postures import LEAD, SCOUT
from tests.support.written import T0, TAINT, Written, new_scribe

# Bodies the tests search raw response bytes for (docs/access.md §2.4: reviewer-only content).
QUARANTINED_BODY = "QUARANTINED-BODY-ALPHA the scraped page said to wire the funds"
RETIRED_BODY = "RETIRED-EVIDENCE-BODY-GAMMA forgotten tainted note"
CLAIMANT_BODY = "QUARANTINED-CLAIMANT-BODY-DELTA take the west face instead"
RELEASED_BODY = "RELEASED-BODY-BETA lead prefers the night shift"


class RealmWriterFactory:
    """``factory(name, format=)`` → a ``StoreWriter`` on a fresh realm file; all share ``clock``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = ManualClock()
        self.writers: list[StoreWriter] = []

    def __call__(self, name: str = "default", *, format: str = "current") -> StoreWriter:
        writer = StoreWriter.create(name, root=self.root, format=format, clock=self.clock)
        self.writers.append(writer)
        return writer

    def close(self) -> None:
        for writer in self.writers:
            writer.close()


# The RPC world: one realistic realm ("default") plus a small second one ("other").


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


# The Memory panel realm.

SCRIPT = "<script>alert(1)</script>"
ATTRIBUTE = '"><img src=x onerror=alert(1)>'
HOSTILE = (SCRIPT, ATTRIBUTE)
PANEL_QUARANTINED_BODY = "SECRET-QUARANTINED-BODY the forum says the cap is gone"
PANEL_QUARANTINED_TITLE = "Quarantined claim about the per-diem cap"
LUKA_FACTS = 23
ANA_PROCEDURES = 4
MOB_GOTCHAS = 3


@dataclass
class PanelRealm:
    name: str
    ids: dict[str, str] = field(default_factory=dict)
    luka_fact_ids: list[str] = field(default_factory=list)


def write_panel_realm(root: Path, name: str = "default", *, hostile: bool = False) -> PanelRealm:
    """A realm with known counts per scope, a supersede chain with a claimant, quarantine and a dream.

    - identity:luka: ``LUKA_FACTS`` active facts (trust agent_observed) plus a 3-record chain
      (two superseded, one active) and one uncommitted claimant of the chain's tip.
    - identity:ana: ``ANA_PROCEDURES`` procedures with trust operator.
    - mob ops: ``MOB_GOTCHAS`` gotchas; operator oncall: 1 reference; realm: 1 fact.
    - one quarantined record (identity:mira) carrying ``PANEL_QUARANTINED_BODY``.
    - one steward dream run touching the mob records.
    """
    clock = ManualClock(1_767_225_600_000)
    realm = PanelRealm(name)
    evil = f" {SCRIPT} {ATTRIBUTE}" if hostile else ""
    luka_identity = f"identity:luka{SCRIPT}" if hostile else "identity:luka"
    with StoreWriter.create(name, root=root, clock=clock) as w:
        luka = identity_scope(name, luka_identity)
        for n in range(LUKA_FACTS):
            clock.advance(60_000)
            realm.luka_fact_ids.append(
                w.remember(luka, f"Luka fact {n:02d}{evil}", f"Body of Luka fact {n}.{evil}", tags=["travel"])
            )
        ana = identity_scope(name, "identity:ana")
        for n in range(ANA_PROCEDURES):
            clock.advance(60_000)
            w.remember(ana, f"Ana procedure {n}", f"Step one, step two ({n}).", kind="procedure", trust="operator")
        ops = mob_scope(name, "ops")
        mob_ids = []
        for n in range(MOB_GOTCHAS):
            clock.advance(60_000)
            mob_ids.append(w.remember(ops, f"Ops gotcha {n}", f"Watch out for thing {n}.", kind="gotcha"))
        clock.advance(60_000)
        w.remember(operator_scope(name, "oncall"), "On-call rota", "Mondays at 10:00.", kind="reference")
        clock.advance(60_000)
        w.remember(realm_scope(name), "Realm-wide fact", "Everyone shares this.")

        clock.advance(60_000)
        realm.ids["seat_v1"] = w.remember(
            luka,
            f"Prefers window seats{evil}",
            f"Window seats on short flights.{evil}\n  indented line\n\nlast line",
            tags=["flights", SCRIPT] if hostile else ["flights"],
            description=f"Seat preference{evil}",
            author=agent(luka_identity),
            evidence=[evidence_ref(f"session-1{evil}", 2, revision="r1")],
            verification=verification_claim(f"checked the booking history{evil}"),
        )
        clock.advance(60_000)
        realm.ids["seat_v2"] = w.supersede(realm.ids["seat_v1"], "Prefers aisle seats", "Aisle seats now.")
        clock.advance(60_000)
        realm.ids["seat_v3"] = w.supersede(
            realm.ids["seat_v2"], "Prefers aisle, window on long-haul", "Aisle short, window long.",
            derived_from=[mob_ids[0]],
        )
        w.record_injection(realm.ids["seat_v3"], luka_identity, surface="build", session_key="sess-42")
        w.record_injection(realm.ids["seat_v3"], luka_identity, surface="turn")
        w.mark_usage(realm.ids["seat_v3"], "judged_useful")
        clock.advance(60_000)
        # A quarantined supersede leaves the prior active and the new row an uncommitted claimant
        # (docs/store-format.md §4.2).
        realm.ids["claimant"] = w.supersede(
            realm.ids["seat_v3"], "Prefers the exit row", "Exit row, always.", author=agent(luka_identity),
            gate_reason="session tainted by web tool 'web_fetch'",
        )
        clock.advance(60_000)
        realm.ids["quarantined"] = w.remember(
            identity_scope(name, "identity:mira"),
            PANEL_QUARANTINED_TITLE,
            PANEL_QUARANTINED_BODY,
            author=agent("identity:mira"),
            gate_reason=f"session tainted by MCP server 'scraper'{evil}",
        )
        clock.advance(60_000)
        run = w.new_dream_run_id()
        started = clock()
        receipt = w.steward_batch(
            run,
            [create_op(ops, new_record(kind="procedure", title="Ops checklist", body="1. 2. 3."),
                       derived_from=mob_ids[:2], rationale=f"consolidated the ops gotchas{evil}")],
        )
        realm.ids["dream_created"] = receipt.memory_ids[0]
        realm.ids["dream_run"] = run
        w.record_dream_run(
            run, started_at_ms=started, ops_committed=receipt.applied_ops,
            phases=[("consolidate", "1 op")], verdicts={"proposals_accepted": 2},
        )
    return realm


RETIRED_SUCCESSOR_TITLE = "Gate code moved to the side door"


def write_retired_successor(writer: StoreWriter, identity: str = "identity:luka") -> tuple[str, str]:
    """A fact whose successor only reviewers may read now: (prior id, successor id).

    A tainted session superseded the fact, so the new version waited in quarantine; a reviewer
    released it (the released copy supersedes the fact) and it was later forgotten: a tombstone
    that was once quarantined, reviewer-only (docs/access.md §2.4), while the fact stays readable.
    """
    scope = identity_scope(writer.realm, identity)
    prior = writer.remember(scope, "Gate code is at the front door", "Front door, code on the card.")
    claimant = writer.supersede(prior, RETIRED_SUCCESSOR_TITLE, "Side door now.", author=agent(identity),
                                gate_reason="session tainted by web tool 'web_fetch'")
    successor = writer.review_quarantine(claimant, "release",
                                         reviewer={"kind": "operator", "principal": "maria@example.com"}).successor
    assert successor is not None and writer.forget(successor)
    return prior, successor


@dataclass(frozen=True)
class ReviewerOnlyRecords:
    """Records of one identity: three only reviewers may read (docs/access.md §2.4), one every reader may."""

    quarantined: str  # a tainted write, still waiting in quarantine
    tombstoned: str  # a quarantined write a reviewer tombstoned
    released: str  # the ordinary successor of a release
    origin: str  # the released write's origin, tombstoned by the release

    @property
    def hidden(self) -> tuple[str, ...]:
        return (self.quarantined, self.tombstoned, self.origin)


def write_reviewer_only_records(writer: StoreWriter, identity: str = "identity:luka") -> ReviewerOnlyRecords:
    scope = identity_scope(writer.realm, identity)
    reviewer = {"kind": "operator", "principal": "maria@example.com"}
    taint = "session tainted by web tool 'web_fetch'"

    def tainted(title: str) -> str:
        return writer.remember(scope, title, f"{title} (from a web page).", author=agent(identity), gate_reason=taint)

    quarantined = tainted("Hotel rates leaked on a forum")
    tombstoned = tainted("The CEO's flight number")
    writer.review_quarantine(tombstoned, "tombstone", reviewer=reviewer)
    origin = tainted("Offsite moved to Porto")
    released = writer.review_quarantine(origin, "release", reviewer=reviewer).successor
    assert released is not None
    return ReviewerOnlyRecords(quarantined, tombstoned, released, origin)


ScopePick = Callable[[int], tuple[str, str, bool]]


def write_notes(root: Path, realm: str, count: int, *, start_ms: int = T0, tie_every: int = 3,
                pick_scope: ScopePick | None = None, fmt: str = "current") -> list[Written]:
    """``count`` records whose timestamps tie in runs of ``tie_every`` (the clock stands still between).

    ``pick_scope(i)`` → (scope kind, scope key, quarantined) for record ``i``; by default identity
    records alternating between the lead and the scout, none quarantined.
    """
    scribe = new_scribe(root, realm, fmt=fmt, start_ms=start_ms)
    rows: list[Written] = []
    for i in range(count):
        kind, key, quarantine = pick_scope(i) if pick_scope else ("identity", SCOUT if i % 2 else LEAD, False)
        scope = identity_scope(realm, key) if kind == "identity" else mob_scope(realm, key)
        rows.append(scribe.remember(
            scope, f"{realm} note {i}", f"{realm} body {i}",
            author=agent(key) if quarantine else {"author": "application"},
            gate_reason=TAINT if quarantine else None,
            advance_ms=10 if i % tie_every == 0 else 0,
        ))
    scribe.writer.close()
    return rows


def write_spread(root: Path, realm: str, records: int, identities: int) -> None:
    """``records`` plain notes spread round-robin over ``identities`` identity scopes.

    A wide realm: Holdings has one row per scope, so this is the shape that makes it expensive.
    """
    def ops():
        for i in range(records):
            scope = identity_scope(realm, f"identity:agent-{i % identities:02d}")
            record = new_record(kind="fact", title=f"Observation {i}", body=f"Agent noted fact {i}.")
            at = T0 + i * 3
            yield create_op(scope, record, created_at_ms=at, updated_at_ms=at)

    with StoreWriter.create(realm, root=root) as writer:
        writer.bulk_apply(ops(), author=APPLICATION)
