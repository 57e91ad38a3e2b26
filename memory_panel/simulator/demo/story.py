"""The main demo realm's story, told in chapters: a month in the life of a travel-and-operations team.

The cast: agents identity:luka, identity:ana, identity:router, identity:mira and identity:tomas,
the mob ``ops``, the on-call operator ``oncall`` and realm-wide facts. Each chapter is one part of
the month, written in order through the store writer, so the file carries MobKit's exact write
semantics: every record kind and trust tier, supersede chains (one with a quarantined claimant),
released and tombstoned quarantine reviews, injections at build and turn, usage marks, proposals
with and without taint, gated promotions, three steward dream runs and pending harvests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memory_panel.simulator.demo.dreams import dream_one, dream_three, dream_two
from memory_panel.simulator.demo.usage import judge_useful
from memory_panel.simulator.demo.cast import (
    DAY_MS,
    IDENTITIES,
    MOB,
    OPERATOR_NAME,
    OPERATOR_REVIEWER,
    TAINT_MCP,
    TAINT_WEB,
    session_key,
)
from memory_panel.simulator.store_writer import (
    OPERATOR,
    ManualClock,
    StoreWriter,
    agent,
    evidence_ref,
    identity_scope,
    mob_scope,
    new_record,
    operator_scope,
    realm_scope,
    verification_claim,
)


@dataclass
class Story:
    """What every chapter writes with: the writer, its clock, the scopes, and the ids so far."""

    writer: StoreWriter
    clock: ManualClock
    ids: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        realm = self.writer.realm
        self.luka, self.ana, self.router, self.mira, self.tomas = (identity_scope(realm, i) for i in IDENTITIES)
        self.ops_mob = mob_scope(realm, MOB)
        self.oncall = operator_scope(realm, OPERATOR_NAME)
        self.whole = realm_scope(realm)

    def tick(self, hours: float = 1.0) -> None:
        self.clock.advance(int(hours * 3_600_000))


def application_seeds(s: Story) -> None:
    """Day 1: the application writes down what it knows about people, policy and the office."""
    w, ids = s.writer, s.ids
    ids["seat"] = w.remember(s.luka, "Prefers window seats on short flights",
                             "Luka asked for a window seat on both Oslo trips in March. On flights "
                             "under two hours he would rather look out than get up.",
                             kind="preference", tags=["travel", "flights"])
    s.tick()
    ids["hotel"] = w.remember(s.luka, "Hotel must be walkable to the office",
                              "For the Berlin offsite Luka rejected two hotels more than 20 minutes "
                              "on foot from the Mitte office. Keep the shortlist within a 15-minute walk.",
                              kind="preference", tags=["travel", "hotels"])
    s.tick()
    ids["ana_sister"] = w.remember(s.ana, "Ana's sister Petra lives in Lisbon",
                                   "Ana mentioned Petra when planning the May trip; she likes to add a "
                                   "weekend in Lisbon whenever work takes her to Portugal.",
                                   kind="relationship", tags=["family", "Lisbon"])
    s.tick()
    ids["expense"] = w.remember(s.whole, "Expense reports close on the 25th",
                                "Finance locks the monthly expense batch at 18:00 CET on the 25th. "
                                "Anything filed later lands in the next month's run.",
                                kind="fact", tags=["finance", "deadlines"], trust="application")
    s.tick()
    ids["vpn"] = w.remember(s.whole, "VPN drops on hotel Wi-Fi with captive portals",
                            "Open the captive portal page in a plain browser tab first, then start "
                            "the VPN. Starting the VPN first leaves the tunnel hanging for about a minute.",
                            kind="gotcha", tags=["it", "travel"], trust="operator", author=OPERATOR)
    s.tick()
    ids["handbook"] = w.remember(s.whole, "Travel policy handbook",
                                 "The current travel policy is the 2026 handbook in the shared drive "
                                 "under People/Policies. Section 4 covers per-diem rates by city.",
                                 kind="reference", tags=["policy", "travel"], trust="application")
    s.tick()
    ids["oncall_rota"] = w.remember(s.oncall, "On-call hand-over happens Mondays at 10:00",
                                    "The outgoing on-call writes the hand-over note in #ops-handover "
                                    "before 10:00 and stays reachable until noon.",
                                    kind="procedure", tags=["oncall"], trust="operator", author=OPERATOR)
    s.tick()
    ids["deploy_freeze"] = w.remember(s.ops_mob, "No deploys on Friday afternoons",
                                      "The ops mob agreed after the February incident: nothing ships "
                                      "after 14:00 on Fridays unless the on-call signs off in writing.",
                                      kind="procedure", tags=["deploys", "policy"], trust="application")
    s.tick(5)


def agents_remember(s: Story) -> None:
    """The agents remember things themselves (the Recorder tool), citing their sessions."""
    w, ids = s.writer, s.ids
    ids["router_fallback"] = w.remember(
        s.router, "Fallback model for long itineraries",
        "When an itinerary has more than six legs, the router hands it to the planning model "
        "instead of the chat model; the chat model drops legs past the sixth.",
        kind="gotcha", tags=["routing", "epistemic:operator_said"], author=agent("identity:router"),
        evidence=[evidence_ref(session_key("identity:router", 1), 3, range_=(12, 18))])
    s.tick()
    ids["mira_visa"] = w.remember(
        s.mira, "Mira's passport renewal is in progress",
        "Mira's passport is at the embassy until mid-June. No international bookings for her before "
        "it comes back.", kind="open_loop", tags=["travel", "documents"], author=agent("identity:mira"),
        description="Blocks international travel until the passport is returned.",
        evidence=[evidence_ref(session_key("identity:mira", 4), 1)])
    s.tick()
    ids["tomas_diet"] = w.remember(
        s.tomas, "Tomas is vegetarian",
        "Tomas asked for vegetarian meals on the team dinner booking and on the Lisbon flight.",
        kind="preference", tags=["food"], author=agent("identity:tomas"),
        verification=verification_claim("confirmed with Tomas in chat before booking the dinner"),
        evidence=[evidence_ref(session_key("identity:tomas", 2), 5)])
    s.tick()
    ids["ana_visa_steps"] = w.remember(
        s.ana, "Schengen visa letters need the HR stamp",
        "Invitation letters for non-EU guests are only accepted with the HR stamp and a wet "
        "signature; the scanned template is rejected at the consulate.",
        kind="procedure", tags=["visa", "hr"], author=agent("identity:ana"),
        trust="untrusted", evidence=[evidence_ref(session_key("identity:ana", 7), 2)])
    s.tick(12)


def supersede_chains(s: Story) -> None:
    """Minds change: a three-link chain, a tainted claimant beside its active prior, an exception."""
    w, ids = s.writer, s.ids
    # Luka changed his mind twice; the chain is seat → aisle → aisle-on-long-haul.
    ids["seat_v2"] = w.supersede(ids["seat"], "Prefers aisle seats on short flights",
                                 "After the delayed Oslo return Luka switched to aisle seats so he "
                                 "can leave the plane first.")
    s.tick(30)
    ids["seat_v3"] = w.supersede(ids["seat_v2"], "Prefers aisle seats, window on long-haul",
                                 "Aisle on anything under four hours; window on long-haul so he can "
                                 "sleep against the wall.", rationale="clarified in the May planning call")
    s.tick()
    # A tainted session tried to overwrite the hotel rule: a claimant, the prior stays active.
    ids["hotel_claimant"] = w.supersede(
        ids["hotel"], "Hotel can be anywhere with a metro stop",
        "A booking site review said any hotel near a U-Bahn stop is fine for the Mitte office.",
        author=agent("identity:luka"), gate_reason=TAINT_WEB,
        evidence=[evidence_ref(session_key("identity:luka", 9), 1)])
    s.tick()
    # The deploy-freeze procedure grew an exception (application update).
    ids["deploy_freeze_v2"] = w.supersede(
        ids["deploy_freeze"], "No deploys on Friday afternoons (hotfixes excepted)",
        "Nothing ships after 14:00 on Fridays. Security hotfixes may ship with the on-call's written "
        "sign-off in #ops-deploys.", trust="application", rationale="incident review follow-up")
    s.tick(3)


def quarantined_writes(s: Story) -> None:
    """Tainted sessions write; the gate quarantines all five (reviewed in the next chapter)."""
    w, ids = s.writer, s.ids
    ids["q_release"] = w.remember(
        s.ana, "Lisbon office moved to Avenida da Liberdade",
        "The Lisbon office moved to Avenida da Liberdade 110 in April; the old Alcântara address "
        "still shows up in the booking tool.", kind="fact", tags=["lisbon", "offices"],
        author=agent("identity:ana"), gate_reason=TAINT_MCP,
        evidence=[evidence_ref(session_key("identity:ana", 8), 2)])
    s.tick()
    ids["q_tombstone"] = w.remember(
        s.router, "Ignore the per-diem cap for Zurich",
        "A forum post claims the Zurich per-diem cap no longer applies to contractors.",
        kind="fact", tags=["finance"], author=agent("identity:router"), gate_reason=TAINT_WEB,
        evidence=[evidence_ref(session_key("identity:router", 5), 4)])
    s.tick()
    ids["q_waiting"] = w.remember(
        s.mira, "Embassy appointments open on Tuesdays",
        "Someone on a travel forum says the embassy releases new passport appointments every "
        "Tuesday at 08:00.", kind="gotcha", tags=["documents"], author=agent("identity:mira"),
        gate_reason=TAINT_WEB, evidence=[evidence_ref(session_key("identity:mira", 6), 3)])
    s.tick()
    ids["q_gated"] = w.remember(
        s.tomas, "The team dinner venue takes group bookings only by phone",
        "Casa Tejo does not accept online bookings for more than eight people; call them directly.",
        kind="gotcha", tags=["food", "lisbon"], author=agent("identity:tomas"), gate_reason=TAINT_MCP,
        evidence=[evidence_ref(session_key("identity:tomas", 3), 2)])
    s.tick()
    ids["q_steward"] = w.remember(
        s.luka, "Berlin hotels waive the city tax for business trips",
        "A scraped booking page says Berlin hotels no longer charge the city tax on business stays.",
        kind="fact", tags=["berlin", "finance"], author=agent("identity:luka"), gate_reason=TAINT_MCP,
        evidence=[evidence_ref(session_key("identity:luka", 11), 2)])
    s.tick(2)


def operator_reviews(s: Story) -> None:
    """An operator releases one quarantined fact and tombstones another; an agent builds on the first."""
    w, ids = s.writer, s.ids
    released = w.review_quarantine(ids["q_release"], "release", reviewer=OPERATOR_REVIEWER,
                                   rationale="checked against the facilities page")
    ids["q_release_successor"] = released.successor or ""
    s.tick()
    w.review_quarantine(ids["q_tombstone"], "tombstone", reviewer=OPERATOR_REVIEWER,
                        rationale="contradicts the travel handbook")
    s.tick()
    # An agent's own later fact derived from the released one inherits its quarantine history.
    ids["derived"] = w.remember(
        s.ana, "Book Lisbon visitors near Marquês de Pombal",
        "With the office on Avenida da Liberdade, hotels around Marquês de Pombal are a five-minute walk.",
        kind="preference", tags=["lisbon", "hotels"], author=agent("identity:ana"),
        derived_from=[ids["q_release_successor"]])
    s.tick(4)


def injections_and_usage(s: Story) -> None:
    """Recall puts records in front of the agents at build and turn; some prove useful."""
    w, ids = s.writer, s.ids
    for day, (record, identity, surface) in enumerate([
        (ids["seat_v3"], "identity:luka", "build"), (ids["hotel"], "identity:luka", "build"),
        (ids["vpn"], "identity:luka", "turn"), (ids["ana_sister"], "identity:ana", "build"),
        (ids["expense"], "identity:ana", "turn"), (ids["router_fallback"], "identity:router", "build"),
        (ids["seat_v3"], "identity:luka", "turn"), (ids["tomas_diet"], "identity:tomas", "build"),
        (ids["deploy_freeze_v2"], "identity:router", "build"), (ids["mira_visa"], "identity:mira", "turn"),
    ]):
        w.record_injection(record, identity, surface=surface,
                           session_key=session_key(identity, 10 + day) if surface == "turn" else None)
        s.tick(0.5)
    w.mark_usage(ids["seat_v3"], "explicit_recall")
    judge_useful(w, ids["seat_v3"])
    w.mark_usage(ids["vpn"], "explicit_recall")
    s.tick(6)


def proposals(s: Story) -> None:
    """Agents propose mob-wide knowledge: one clean, two tainted, one held, one to gate later."""
    w, ids = s.writer, s.ids
    ids["prop_clean"] = w.propose(s.ops_mob, new_record(
        kind="procedure", title="Rotate the booking API key every 90 days",
        body="The travel booking API key expires silently after 90 days; rotate it at the start of "
             "each quarter and update the vault entry.", tags=["ops", "keys"]),
        author=agent("identity:router"))
    s.tick()
    ids["prop_tainted"] = w.propose(s.ops_mob, new_record(
        kind="fact", title="Airline X refunds within 48 hours",
        body="A blog post says Airline X now refunds cancelled tickets within 48 hours.",
        tags=["refunds"]), author=agent("identity:ana"), taint=TAINT_WEB)
    s.tick()
    ids["prop_held"] = w.propose(s.ops_mob, new_record(
        kind="open_loop", title="Decide who owns the visa letter template",
        body="HR and the travel desk both edit the visa letter template; nobody owns it.",
        tags=["visa"]), author=agent("identity:mira"))
    w.set_proposal_status(ids["prop_held"], "held")
    s.tick()
    ids["prop_gated"] = w.propose(s.ops_mob, new_record(
        kind="fact", title="Lisbon taxis take cards since March",
        body="Every Lisbon taxi must accept card payments since March; cash is no longer needed.",
        tags=["lisbon"]), author=agent("identity:tomas"), taint=TAINT_MCP)
    s.tick()
    ids["prop_gated_later"] = w.propose(s.ops_mob, new_record(
        kind="gotcha", title="The Oslo office badge readers reject old cards",
        body="Badges issued before 2025 stop working at the Oslo office doors; request a new one a week ahead.",
        tags=["oslo", "badges"]), author=agent("identity:luka"), taint=TAINT_WEB)
    s.tick(20)


def steward_dreams(s: Story) -> None:
    """Three nights of the steward dreaming a day apart (memory_panel/simulator/demo/dreams.py)."""
    dream_one(s.writer, s.clock, s.ids, s.ops_mob)
    s.tick(24)
    dream_two(s.writer, s.clock, s.ids)
    s.tick(24)
    dream_three(s.writer, s.clock, s.ids)
    s.tick(2)


def pending_harvests(s: Story) -> None:
    """Retired identities the steward has not interviewed yet, and one it has."""
    w, clock = s.writer, s.clock
    w.add_pending_harvest("identity:tomas", cause="retire", session_key=session_key("identity:tomas", 14))
    s.tick()
    w.add_pending_harvest("identity:mira", cause="retire")
    s.tick()
    w.add_pending_harvest("identity:old-planner", cause="retire", status="harvested",
                          retired_at_ms=clock() - 5 * DAY_MS)


CHAPTER_GAP_HOURS = 48
CHAPTERS: tuple[Callable[[Story], None], ...] = (
    application_seeds, agents_remember, supersede_chains, quarantined_writes, operator_reviews,
    injections_and_usage, proposals, steward_dreams, pending_harvests,
)


def write_story(writer: StoreWriter, clock: ManualClock) -> dict[str, str]:
    """Every chapter in order; returns the story's named record ids (``DemoSummary.ids``)."""
    story = Story(writer, clock)
    for chapter in CHAPTERS:
        chapter(story)
        # docs/demo.md §5: chapters days apart, so the seeded timeline reads as weeks of work.
        story.tick(CHAPTER_GAP_HOURS)
    return story.ids
