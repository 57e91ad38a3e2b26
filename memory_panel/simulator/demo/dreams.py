"""The steward's three dream runs in the demo story, a day apart (docs/store-format.md §7.3).

Each run writes its commit groups authored ``steward{run_id}`` and then its run sheet, so the
Dreams page shows what a real dream leaves behind.
"""

from __future__ import annotations

from typing import Any

from memory_panel.simulator.demo.cast import MOB
from memory_panel.simulator.demo.usage import judge_useful
from memory_panel.simulator.store_writer import (
    ManualClock,
    StoreWriter,
    agent,
    create_op,
    identity_scope,
    mob_scope,
    new_record,
    retier_op,
    set_rank_op,
    tombstone_op,
)


def dream_one(w: StoreWriter, clock: ManualClock, ids: dict[str, str], ops_mob: dict[str, Any]) -> None:
    """Consolidate, accept the clean proposal, gate two tainted sources, rank the working set."""
    run = w.new_dream_run_id()
    started = clock()
    committed = 0
    # consolidate: merge two travel notes into a procedure in the mob scope
    committed += w.steward_batch(run, [create_op(ops_mob, new_record(
        kind="procedure", title="Booking checklist for team offsites",
        body="1. Check the travel handbook per-diem table. 2. Hotels within a 15-minute walk of the "
             "office. 3. Ask about dietary needs before booking dinners. 4. File expenses before the 25th.",
        tags=["travel", "checklist"]), derived_from=[ids["hotel"], ids["expense"]],
        rationale="consolidated from recurring travel notes")]).applied_ops
    clock.advance(60_000)
    # accept the clean proposal
    committed += w.accept_proposal(ids["prop_clean"], run_id=run,
                                   rationale="verified against the vendor's key policy").applied_ops
    clock.advance(60_000)
    # gate the tainted proposal and the quarantined dinner note for an operator
    ids["pending_prop"] = w.stage_gated_promotion(ids["prop_gated"], ops_mob, run_id=run,
                                                  rationale="useful for every Lisbon visitor, but tainted")
    clock.advance(60_000)
    ids["pending_q"] = w.stage_gated_promotion(ids["q_gated"], ops_mob, run_id=run,
                                               rationale="the whole mob books this venue")
    clock.advance(60_000)
    w.set_proposal_status(ids["prop_tainted"], "rejected")
    committed += w.steward_batch(run, [set_rank_op(ids["seat_v3"], 1), set_rank_op(ids["vpn"], 2),
                                       set_rank_op(ids["expense"], 3)]).applied_ops
    w.record_dream_run(run, started_at_ms=started, ops_committed=committed,
                       phases=[("consolidate", "1 op"), ("proposals", "1 accepted, 1 rejected, 1 gated"),
                               ("quarantine", "1 gated"), ("rank", "3 ranked")],
                       verdicts={"proposals_accepted": 1, "proposals_rejected": 1, "proposals_gated": 1,
                                 "quarantine_gated": 1},
                       audit_verdicts=[(ids["ana_visa_steps"], "dead_weight",
                                        "never injected in 30 days and contradicted by the HR page")])
    ids["dream_1"] = run


def dream_two(w: StoreWriter, clock: ManualClock, ids: dict[str, str]) -> None:
    """After the operator's gate approval: verify one record, drop dead weight, mark what is used."""
    run = w.new_dream_run_id()
    started = clock()
    # the operator approved the gated proposal before this run; the steward only tidies up
    w.resolve_promotion(ids["pending_prop"], "committed")
    clock.advance(60_000)
    committed = w.steward_batch(run, [
        retier_op(ids["tomas_diet"], "agent_verified", rationale="verification claim checked in chat"),
        tombstone_op(ids["ana_visa_steps"], rationale="dead weight: superseded by the HR page"),
    ]).applied_ops
    clock.advance(60_000)
    for record in (ids["seat_v3"], ids["router_fallback"]):
        judge_useful(w, record)
    w.record_dream_run(run, started_at_ms=started, ops_committed=committed,
                       phases=[("consolidate", "0 ops"), ("usage_audit", "2 load-bearing, 1 dead weight"),
                               ("retier", "1 verified")],
                       verdicts={"usage_load_bearing": 2, "usage_dead_weight": 1},
                       skips=["contradictions: no conflicting pairs above threshold"],
                       audit_verdicts=[(ids["mira_visa"], "unknown", "open loop with no recent turns")])
    ids["dream_2"] = run


def dream_three(w: StoreWriter, clock: ManualClock, ids: dict[str, str]) -> None:
    """An exit interview (harvest), a steward quarantine verdict, one more gated proposal."""
    run = w.new_dream_run_id()
    started = clock()
    # harvest: a retired planner's note is kept in the mob, the rest tombstoned
    planner = identity_scope(w.realm, "identity:old-planner")
    kept = w.remember(planner, "Conference rooms in Berlin need booking a week ahead",
                      "The Mitte office rooms for more than six people are booked out about a week in advance.",
                      kind="gotcha", tags=["berlin", "rooms"], author=agent("identity:old-planner"))
    dropped = w.remember(planner, "Old planner's scratch list",
                         "Call the caterer; check the projector; print badges.",
                         kind="open_loop", author=agent("identity:old-planner"))
    clock.advance(60_000)
    committed = w.steward_batch(run, [
        create_op(mob_scope(w.realm, MOB), new_record(
            kind="gotcha", title="Conference rooms in Berlin need booking a week ahead",
            body="The Mitte office rooms for more than six people are booked out about a week in advance.",
            tags=["berlin", "rooms"]), derived_from=[kept],
            rationale="exit-interview promotion from 'identity:old-planner': still true for every offsite"),
        tombstone_op(kept, rationale="promoted to mob scope at exit interview"),
        tombstone_op(dropped, rationale="exit-interview retention: a finished to-do list"),
    ]).applied_ops
    clock.advance(60_000)
    # a steward quarantine review tombstones one scraped claim; a tainted proposal waits for a gate
    committed += 1
    w.review_quarantine(ids["q_steward"], "tombstone", reviewer={"kind": "steward", "run_id": run},
                        rationale="the city tax still applies per the finance team")
    clock.advance(60_000)
    ids["pending_prop_later"] = w.stage_gated_promotion(ids["prop_gated_later"], mob_scope(w.realm, MOB),
                                                        run_id=run, rationale="every Oslo visitor hits this")
    w.record_dream_run(run, started_at_ms=started, ops_committed=committed,
                       phases=[("harvest", "1 promoted, 1 tombstoned"), ("proposals", "1 gated"),
                               ("quarantine", "1 tombstoned, 2 held")],
                       verdicts={"harvests_completed": 1, "proposals_gated": 1, "quarantine_tombstoned": 1,
                                 "quarantine_held": 2},
                       skips=["rank: working set unchanged"])
    ids["dream_3"] = run
