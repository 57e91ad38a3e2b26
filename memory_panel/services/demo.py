"""The demo realms ``seed_demo`` writes: every panel of the console has something real to show.

Everything goes through the store writer, so the files carry MobKit's exact write semantics. The
main realm tells a small story — a travel-and-operations team of agents (identity:luka,
identity:ana, identity:router, …) in the mob ``ops``, an on-call operator and realm-wide
facts — with every record kind and trust tier, supersede chains (one with a quarantined
claimant), released and tombstoned quarantine reviews, injections at build and turn, usage marks,
proposals with and without taint, gated promotions, three steward dream runs and pending
harvests. A second, smaller realm (``team:blue`` by default) needs percent-encoding in its file
name. ``records`` pads the main realm with generated records up to that total, for load tests.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_panel.services.store_writer import (
    APPLICATION,
    OPERATOR,
    ManualClock,
    StoreWriter,
    agent,
    create_op,
    evidence_ref,
    identity_scope,
    mob_scope,
    new_record,
    operator_scope,
    realm_file,
    realm_scope,
    retier_op,
    set_rank_op,
    tombstone_op,
    verification_claim,
    wall_clock_ms,
)

DEFAULT_REALM = "default"
SECOND_REALM = "team:blue"
DAY_MS = 86_400_000
IDENTITIES = ("identity:luka", "identity:ana", "identity:router", "identity:mira", "identity:tomas")
MOB = "ops"
OPERATOR_NAME = "oncall"
TAINT_WEB = "session tainted by web tool 'web_fetch'"
TAINT_MCP = "session tainted by MCP server 'scraper' (tool 'get_page')"


@dataclass
class DemoSummary:
    """What was written, for the command's report and for tests."""

    realms: dict[str, Path] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)


def seed_demo(*, root: Path, realm: str = DEFAULT_REALM, records: int = 0,
              second_realm: str | None = SECOND_REALM, force: bool = False,
              start_ms: int | None = None,
              progress: Callable[[int], None] | None = None) -> DemoSummary:
    """Write the demo realm (and the second realm) under ``root``.

    Raises FileExistsError if a realm file exists and ``force`` is false; nothing is written then.
    ``records`` is the total record count wanted in the main realm (the story's records count);
    ``progress`` is called with the number of padding records written after each batch.
    """
    names = [realm] + ([second_realm] if second_realm and second_realm != realm else [])
    existing = [str(realm_file(name, root)) for name in names if realm_file(name, root).exists()]
    if existing and not force:
        raise FileExistsError(f"realm file already exists: {', '.join(existing)} (use --force)")
    summary = DemoSummary()
    # The story spans the last month, so ages in the panel read like a live deployment's.
    clock = ManualClock(start_ms if start_ms is not None else wall_clock_ms() - 30 * DAY_MS)
    with StoreWriter.create(realm, root=root, clock=clock, overwrite=force) as writer:
        story_ids = _write_story(writer, clock)
        summary.ids.update(story_ids)
        story_count = writer.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        if records > story_count:
            _pad(writer, clock, records - story_count, progress)
        summary.realms[realm] = writer.path
        summary.records[realm] = writer.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    if len(names) > 1:
        with StoreWriter.create(names[1], root=root, clock=clock, overwrite=force) as writer:
            _write_second_realm(writer, clock)
            summary.realms[names[1]] = writer.path
            summary.records[names[1]] = writer.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    return summary


# --------------------------------------------------------------------------------------------
# The story
# --------------------------------------------------------------------------------------------


def _session(identity: str, n: int) -> str:
    return f"sess-{identity.split(':', 1)[1]}-{n:03d}"


def _write_story(w: StoreWriter, clock: ManualClock) -> dict[str, str]:
    r = w.realm
    luka, ana, router, mira, tomas = (identity_scope(r, i) for i in IDENTITIES)
    ops_mob, oncall, whole = mob_scope(r, MOB), operator_scope(r, OPERATOR_NAME), realm_scope(r)
    ids: dict[str, str] = {}

    def tick(hours: float = 1.0) -> None:
        clock.advance(int(hours * 3_600_000))

    # --- day 1: the application seeds what it knows ----------------------------------------
    ids["seat"] = w.remember(luka, "Prefers window seats on short flights",
                             "Luka asked for a window seat on both Oslo trips in March. On flights "
                             "under two hours he would rather look out than get up.",
                             kind="preference", tags=["travel", "flights"])
    tick()
    ids["hotel"] = w.remember(luka, "Hotel must be walkable to the office",
                              "For the Berlin offsite Luka rejected two hotels more than 20 minutes "
                              "on foot from the Mitte office. Keep the shortlist within a 15-minute walk.",
                              kind="preference", tags=["travel", "hotels"])
    tick()
    ids["ana_sister"] = w.remember(ana, "Ana's sister Petra lives in Lisbon",
                                   "Ana mentioned Petra when planning the May trip; she likes to add a "
                                   "weekend in Lisbon whenever work takes her to Portugal.",
                                   kind="relationship", tags=["family", "Lisbon"])
    tick()
    ids["expense"] = w.remember(whole, "Expense reports close on the 25th",
                                "Finance locks the monthly expense batch at 18:00 CET on the 25th. "
                                "Anything filed later lands in the next month's run.",
                                kind="fact", tags=["finance", "deadlines"], trust="application")
    tick()
    ids["vpn"] = w.remember(whole, "VPN drops on hotel Wi-Fi with captive portals",
                            "Open the captive portal page in a plain browser tab first, then start "
                            "the VPN. Starting the VPN first leaves the tunnel hanging for about a minute.",
                            kind="gotcha", tags=["it", "travel"], trust="operator", author=OPERATOR)
    tick()
    ids["handbook"] = w.remember(whole, "Travel policy handbook",
                                 "The current travel policy is the 2026 handbook in the shared drive "
                                 "under People/Policies. Section 4 covers per-diem rates by city.",
                                 kind="reference", tags=["policy", "travel"], trust="application")
    tick()
    ids["oncall_rota"] = w.remember(oncall, "On-call hand-over happens Mondays at 10:00",
                                    "The outgoing on-call writes the hand-over note in #ops-handover "
                                    "before 10:00 and stays reachable until noon.",
                                    kind="procedure", tags=["oncall"], trust="operator", author=OPERATOR)
    tick()
    ids["deploy_freeze"] = w.remember(ops_mob, "No deploys on Friday afternoons",
                                      "The ops mob agreed after the February incident: nothing ships "
                                      "after 14:00 on Fridays unless the on-call signs off in writing.",
                                      kind="procedure", tags=["deploys", "policy"], trust="application")
    tick(5)

    # --- the agents remember things themselves (the Recorder tool) -----------------------------
    ids["router_fallback"] = w.remember(
        router, "Fallback model for long itineraries",
        "When an itinerary has more than six legs, the router hands it to the planning model "
        "instead of the chat model; the chat model drops legs past the sixth.",
        kind="gotcha", tags=["routing", "epistemic:operator_said"], author=agent("identity:router"),
        evidence=[evidence_ref(_session("identity:router", 1), 3, range_=(12, 18))])
    tick()
    ids["mira_visa"] = w.remember(
        mira, "Mira's passport renewal is in progress",
        "Mira's passport is at the embassy until mid-June. No international bookings for her before "
        "it comes back.", kind="open_loop", tags=["travel", "documents"], author=agent("identity:mira"),
        description="Blocks international travel until the passport is returned.",
        evidence=[evidence_ref(_session("identity:mira", 4), 1)])
    tick()
    ids["tomas_diet"] = w.remember(
        tomas, "Tomas is vegetarian",
        "Tomas asked for vegetarian meals on the team dinner booking and on the Lisbon flight.",
        kind="preference", tags=["food"], author=agent("identity:tomas"),
        verification=verification_claim("confirmed with Tomas in chat before booking the dinner"),
        evidence=[evidence_ref(_session("identity:tomas", 2), 5)])
    tick()
    ids["ana_visa_steps"] = w.remember(
        ana, "Schengen visa letters need the HR stamp",
        "Invitation letters for non-EU guests are only accepted with the HR stamp and a wet "
        "signature; the scanned template is rejected at the consulate.",
        kind="procedure", tags=["visa", "hr"], author=agent("identity:ana"),
        trust="untrusted", evidence=[evidence_ref(_session("identity:ana", 7), 2)])
    tick(12)

    # --- supersede chains -----------------------------------------------------------------------
    # Luka changed his mind twice; the chain is seat → aisle → aisle-on-long-haul.
    ids["seat_v2"] = w.supersede(ids["seat"], "Prefers aisle seats on short flights",
                                 "After the delayed Oslo return Luka switched to aisle seats so he "
                                 "can leave the plane first.")
    tick(30)
    ids["seat_v3"] = w.supersede(ids["seat_v2"], "Prefers aisle seats, window on long-haul",
                                 "Aisle on anything under four hours; window on long-haul so he can "
                                 "sleep against the wall.", rationale="clarified in the May planning call")
    tick()
    # A tainted session tried to overwrite the hotel rule: a claimant, the prior stays active.
    ids["hotel_claimant"] = w.supersede(
        ids["hotel"], "Hotel can be anywhere with a metro stop",
        "A booking site review said any hotel near a U-Bahn stop is fine for the Mitte office.",
        author=agent("identity:luka"), gate_reason=TAINT_WEB,
        evidence=[evidence_ref(_session("identity:luka", 9), 1)])
    tick()
    # The deploy-freeze procedure grew an exception (application update).
    ids["deploy_freeze_v2"] = w.supersede(
        ids["deploy_freeze"], "No deploys on Friday afternoons (hotfixes excepted)",
        "Nothing ships after 14:00 on Fridays. Security hotfixes may ship with the on-call's written "
        "sign-off in #ops-deploys.", trust="application", rationale="incident review follow-up")
    tick(3)

    # --- quarantined writes: one released, one tombstoned, two still waiting ----------------------
    ids["q_release"] = w.remember(
        ana, "Lisbon office moved to Avenida da Liberdade",
        "The Lisbon office moved to Avenida da Liberdade 110 in April; the old Alcântara address "
        "still shows up in the booking tool.", kind="fact", tags=["lisbon", "offices"],
        author=agent("identity:ana"), gate_reason=TAINT_MCP,
        evidence=[evidence_ref(_session("identity:ana", 8), 2)])
    tick()
    ids["q_tombstone"] = w.remember(
        router, "Ignore the per-diem cap for Zurich",
        "A forum post claims the Zurich per-diem cap no longer applies to contractors.",
        kind="fact", tags=["finance"], author=agent("identity:router"), gate_reason=TAINT_WEB,
        evidence=[evidence_ref(_session("identity:router", 5), 4)])
    tick()
    ids["q_waiting"] = w.remember(
        mira, "Embassy appointments open on Tuesdays",
        "Someone on a travel forum says the embassy releases new passport appointments every "
        "Tuesday at 08:00.", kind="gotcha", tags=["documents"], author=agent("identity:mira"),
        gate_reason=TAINT_WEB, evidence=[evidence_ref(_session("identity:mira", 6), 3)])
    tick()
    ids["q_gated"] = w.remember(
        tomas, "The team dinner venue takes group bookings only by phone",
        "Casa Tejo does not accept online bookings for more than eight people; call them directly.",
        kind="gotcha", tags=["food", "lisbon"], author=agent("identity:tomas"), gate_reason=TAINT_MCP,
        evidence=[evidence_ref(_session("identity:tomas", 3), 2)])
    tick()
    ids["q_steward"] = w.remember(
        luka, "Berlin hotels waive the city tax for business trips",
        "A scraped booking page says Berlin hotels no longer charge the city tax on business stays.",
        kind="fact", tags=["berlin", "finance"], author=agent("identity:luka"), gate_reason=TAINT_MCP,
        evidence=[evidence_ref(_session("identity:luka", 11), 2)])
    tick(2)
    released = w.review_quarantine(ids["q_release"], "release",
                                   reviewer={"kind": "operator", "principal": "maria@example.com"},
                                   rationale="checked against the facilities page")
    ids["q_release_successor"] = released.successor or ""
    tick()
    w.review_quarantine(ids["q_tombstone"], "tombstone",
                        reviewer={"kind": "operator", "principal": "maria@example.com"},
                        rationale="contradicts the travel handbook")
    tick()
    # An agent's own later fact derived from the released one inherits its quarantine history.
    ids["derived"] = w.remember(
        ana, "Book Lisbon visitors near Marquês de Pombal",
        "With the office on Avenida da Liberdade, hotels around Marquês de Pombal are a five-minute walk.",
        kind="preference", tags=["lisbon", "hotels"], author=agent("identity:ana"),
        derived_from=[ids["q_release_successor"]])
    tick(4)

    # --- injections and usage ---------------------------------------------------------------------
    for day, (record, identity, surface) in enumerate([
        (ids["seat_v3"], "identity:luka", "build"), (ids["hotel"], "identity:luka", "build"),
        (ids["vpn"], "identity:luka", "turn"), (ids["ana_sister"], "identity:ana", "build"),
        (ids["expense"], "identity:ana", "turn"), (ids["router_fallback"], "identity:router", "build"),
        (ids["seat_v3"], "identity:luka", "turn"), (ids["tomas_diet"], "identity:tomas", "build"),
        (ids["deploy_freeze_v2"], "identity:router", "build"), (ids["mira_visa"], "identity:mira", "turn"),
    ]):
        w.record_injection(record, identity, surface=surface,
                           session_key=_session(identity, 10 + day) if surface == "turn" else None)
        tick(0.5)
    w.mark_usage(ids["seat_v3"], "explicit_recall")
    w.mark_usage(ids["seat_v3"], "judged_useful")
    w.mark_usage(ids["vpn"], "explicit_recall")
    tick(6)

    # --- proposals ----------------------------------------------------------------------------------
    ids["prop_clean"] = w.propose(ops_mob, new_record(
        kind="procedure", title="Rotate the booking API key every 90 days",
        body="The travel booking API key expires silently after 90 days; rotate it at the start of "
             "each quarter and update the vault entry.", tags=["ops", "keys"]),
        author=agent("identity:router"))
    tick()
    ids["prop_tainted"] = w.propose(ops_mob, new_record(
        kind="fact", title="Airline X refunds within 48 hours",
        body="A blog post says Airline X now refunds cancelled tickets within 48 hours.",
        tags=["refunds"]), author=agent("identity:ana"), taint=TAINT_WEB)
    tick()
    ids["prop_held"] = w.propose(ops_mob, new_record(
        kind="open_loop", title="Decide who owns the visa letter template",
        body="HR and the travel desk both edit the visa letter template; nobody owns it.",
        tags=["visa"]), author=agent("identity:mira"))
    w.set_proposal_status(ids["prop_held"], "held")
    tick()
    ids["prop_gated"] = w.propose(ops_mob, new_record(
        kind="fact", title="Lisbon taxis take cards since March",
        body="Every Lisbon taxi must accept card payments since March; cash is no longer needed.",
        tags=["lisbon"]), author=agent("identity:tomas"), taint=TAINT_MCP)
    tick()
    ids["prop_gated_later"] = w.propose(ops_mob, new_record(
        kind="gotcha", title="The Oslo office badge readers reject old cards",
        body="Badges issued before 2025 stop working at the Oslo office doors; request a new one a week ahead.",
        tags=["oslo", "badges"]), author=agent("identity:luka"), taint=TAINT_WEB)
    tick(20)

    # --- three steward dream runs --------------------------------------------------------------------
    _dream_one(w, clock, ids, ops_mob)
    tick(24)
    _dream_two(w, clock, ids, ops_mob)
    tick(24)
    _dream_three(w, clock, ids)
    tick(2)

    # --- pending harvests (retired identities the steward has not interviewed yet) ---------------------
    w.add_pending_harvest("identity:tomas", cause="retire", session_key=_session("identity:tomas", 14))
    tick()
    w.add_pending_harvest("identity:mira", cause="retire")
    tick()
    w.add_pending_harvest("identity:old-planner", cause="retire", status="harvested",
                          retired_at_ms=clock() - 5 * DAY_MS)
    return ids


def _dream_one(w: StoreWriter, clock: ManualClock, ids: dict[str, str], ops_mob: dict[str, Any]) -> None:
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


def _dream_two(w: StoreWriter, clock: ManualClock, ids: dict[str, str], ops_mob: dict[str, Any]) -> None:
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
        w.mark_usage(record, "judged_useful")
    w.record_dream_run(run, started_at_ms=started, ops_committed=committed,
                       phases=[("consolidate", "0 ops"), ("usage_audit", "2 load-bearing, 1 dead weight"),
                               ("retier", "1 verified")],
                       verdicts={"usage_load_bearing": 2, "usage_dead_weight": 1},
                       skips=["contradictions: no conflicting pairs above threshold"],
                       audit_verdicts=[(ids["mira_visa"], "unknown", "open loop with no recent turns")])
    ids["dream_2"] = run


def _dream_three(w: StoreWriter, clock: ManualClock, ids: dict[str, str]) -> None:
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


# --------------------------------------------------------------------------------------------
# The second realm and the padding
# --------------------------------------------------------------------------------------------


def _write_second_realm(w: StoreWriter, clock: ManualClock) -> None:
    r = w.realm
    kai, noor = identity_scope(r, "identity:kai"), identity_scope(r, "identity:noor")
    first = w.remember(kai, "Standup moved to 09:30", "The blue team's standup moved from 09:00 to 09:30 "
                       "so the Lisbon half can join after school drop-off.", kind="fact", tags=["team"])
    clock.advance(3_600_000)
    w.supersede(first, "Standup is at 09:30 except Fridays", "Fridays the standup is async in #blue-standup.")
    clock.advance(3_600_000)
    w.remember(noor, "Noor reviews infra PRs on Thursdays", "Noor batches infrastructure reviews on "
               "Thursday mornings; ping her before Wednesday evening.", kind="relationship",
               author=agent("identity:noor"))
    clock.advance(3_600_000)
    w.remember(mob_scope(r, "blue"), "Blue team's runbook lives in the wiki",
               "The blue team runbook is wiki/blue/runbook; the old Google Doc is read-only.", kind="reference")
    clock.advance(3_600_000)
    w.remember(noor, "Terraform state bucket is shared with staging",
               "A forum thread claims the prod and staging Terraform state share one bucket.",
               kind="gotcha", author=agent("identity:noor"), gate_reason=TAINT_WEB)


_PAD_SUBJECTS = ("the Berlin offsite", "the Lisbon trip", "the quarterly review", "the booking tool",
                 "the expense run", "the on-call rota", "the visa letters", "the team dinner",
                 "the deploy pipeline", "the hotel shortlist", "the vendor contract", "the Oslo office")
_PAD_FACTS = ("moved to {day}", "needs sign-off from {person}", "is owned by {person} now",
              "breaks when more than {n} people are added", "has a {n}-day lead time",
              "was rescheduled after {person} raised a conflict", "should be checked every {day}")
_PAD_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_PAD_PEOPLE = ("Luka", "Ana", "Mira", "Tomas", "Petra", "Maria", "Jonas")
_PAD_TAGS = ("travel", "ops", "finance", "hr", "deploys", "lisbon", "berlin", "oslo", "vendors", "food")


def _pad_ops(realm: str, count: int, start_ms: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(20260101)
    scopes = [identity_scope(realm, i) for i in IDENTITIES] + [mob_scope(realm, MOB), realm_scope(realm)]
    kinds = ("preference", "fact", "gotcha", "procedure", "relationship", "open_loop", "reference")
    for n in range(count):
        subject = rng.choice(_PAD_SUBJECTS)
        fact = rng.choice(_PAD_FACTS).format(day=rng.choice(_PAD_DAYS), person=rng.choice(_PAD_PEOPLE),
                                             n=rng.randint(2, 40))
        title = f"{subject[0].upper()}{subject[1:]} {fact} (note {n + 1})"
        body = (f"Noted while planning: {subject} {fact}. {rng.choice(_PAD_PEOPLE)} confirmed it on "
                f"{rng.choice(_PAD_DAYS)}; revisit if {subject} changes owner.")
        at = start_ms + n
        yield create_op(rng.choice(scopes), new_record(kind=rng.choice(kinds), title=title, body=body,
                                                       tags=rng.sample(_PAD_TAGS, 2)),
                        created_at_ms=at, updated_at_ms=at)


def _pad(w: StoreWriter, clock: ManualClock, count: int, progress: Callable[[int], None] | None) -> None:
    # Padding records are older than the story (they fill the months before it), one ms apart.
    start = clock() - 120 * DAY_MS
    w.bulk_apply(_pad_ops(w.realm, count, start), author=APPLICATION,
                 on_chunk=(lambda receipt: progress(receipt.applied_ops)) if progress else None)
