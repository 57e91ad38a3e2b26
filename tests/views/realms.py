"""Realm files the Memory panel tests read, written through the store writer.

``write_panel_realm`` builds one realm whose contents the tests can count exactly; the hostile
strings go into every free-text column a page shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memory_panel.services.store_writer import (
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
    verification_claim,
)

SCRIPT = "<script>alert(1)</script>"
ATTRIBUTE = '"><img src=x onerror=alert(1)>'
HOSTILE = (SCRIPT, ATTRIBUTE)
QUARANTINED_BODY = "SECRET-QUARANTINED-BODY the forum says the cap is gone"
QUARANTINED_TITLE = "Quarantined claim about the per-diem cap"
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
    - one quarantined record (identity:mira) carrying ``QUARANTINED_BODY``.
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
            QUARANTINED_TITLE,
            QUARANTINED_BODY,
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
