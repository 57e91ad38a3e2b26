"""The beats of the ongoing demo activity: each one thing a live MobKit deployment does.

A beat reads what it needs from the realm file and writes through the store writer, so every row is
what the runtime would write (docs/store-format.md §4, §7). It returns one line saying what
happened, or None when the realm gives it nothing to do (no quarantined record to review, …).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from memory_panel.simulator.demo.cast import IDENTITIES, MOB, OPERATOR_REVIEWER, TAINT_WEB, session_key
from memory_panel.simulator.demo.phrases import Phrasebook
from memory_panel.simulator.demo.usage import judge_useful
from memory_panel.simulator.store_writer import (
    GATED_PROMOTION_EXPIRY_MS,
    ReviewRefused,
    StoreWriter,
    agent,
    evidence_ref,
    identity_scope,
    mob_scope,
    new_record,
    set_rank_op,
)


@dataclass(frozen=True)
class Scene:
    """Who acts in a realm: its live agent identities (not retired) and its mob."""

    identities: tuple[str, ...]
    mob: str

    @classmethod
    def of(cls, writer: StoreWriter) -> Scene:
        rows = writer.conn.execute(
            "SELECT DISTINCT scope_key FROM records WHERE scope_kind='identity' AND status_kind='active'"
            " AND scope_key NOT IN (SELECT identity FROM pending_harvests) ORDER BY scope_key").fetchall()
        mob = writer.conn.execute("SELECT scope_key FROM records WHERE scope_kind='mob'"
                                  " GROUP BY scope_key ORDER BY COUNT(*) DESC LIMIT 1").fetchone()
        return cls(tuple(r[0] for r in rows) or IDENTITIES[:3], mob[0] if mob else MOB)


Beat = Callable[[StoreWriter, Scene, Phrasebook], "str | None"]


def _session(identity: str, words: Phrasebook) -> str:
    return session_key(identity, words.rng.randint(20, 999))


def agent_remembers(w: StoreWriter, scene: Scene, words: Phrasebook) -> str:
    """An agent's Recorder call: a new note in its own identity scope, citing its session."""
    identity = words.choice(scene.identities)
    session = _session(identity, words)
    note = words.note(session)
    w.remember(identity_scope(w.realm, identity), note.title, note.body, kind=note.kind, tags=note.tags,
               author=agent(identity), evidence=[evidence_ref(session, 1)])
    return f"{identity} remembered '{note.title}'"


def tainted_write(w: StoreWriter, scene: Scene, words: Phrasebook) -> str:
    """An agent whose session read the web writes; the LLM write gate quarantines it (§7.2)."""
    identity = words.choice(scene.identities)
    session = _session(identity, words)
    note = words.web_claim(session)
    w.remember(identity_scope(w.realm, identity), note.title, note.body, kind=note.kind, tags=note.tags,
               author=agent(identity), gate_reason=TAINT_WEB, evidence=[evidence_ref(session, 1)])
    return f"{identity}'s web-tainted write '{note.title}' was quarantined"


def agents_propose(w: StoreWriter, scene: Scene, words: Phrasebook) -> str:
    """Two agents propose mob-wide knowledge: one clean, one from a tainted session."""
    mob = mob_scope(w.realm, scene.mob)
    for from_web in (False, True):
        identity = words.choice(scene.identities)
        note = words.proposal(scene.mob, from_web=from_web)
        w.propose(mob, new_record(kind=note.kind, title=note.title, body=note.body, tags=list(note.tags)),
                  author=agent(identity), taint=TAINT_WEB if from_web else None)
    return f"two proposals for the {scene.mob} mob, one of them tainted"


def recall_injects(w: StoreWriter, scene: Scene, words: Phrasebook) -> str | None:
    """Recall injects an agent's freshest records at build, one again on a turn; one proves useful."""
    identity = words.choice(scene.identities)
    rows = w.conn.execute(
        "SELECT memory_id FROM records WHERE status_kind='active' AND ((scope_kind='identity' AND scope_key=?)"
        " OR (scope_kind='mob' AND scope_key=?) OR scope_kind='realm') ORDER BY updated_at_ms DESC LIMIT 3",
        (identity, scene.mob)).fetchall()
    if not rows:
        return None
    for (memory_id,) in rows:
        w.record_injection(memory_id, identity, surface="build")
    w.record_injection(rows[0][0], identity, surface="turn", session_key=_session(identity, words))
    judge_useful(w, rows[0][0])
    return f"{len(rows) + 1} injections for {identity}"


def agent_updates(w: StoreWriter, scene: Scene, words: Phrasebook) -> str | None:
    """An agent revises one of its own recent notes: a supersede in its identity scope.

    Never a note with a quarantine in its history: its successor would inherit the flag with no
    review of its own, and TAINT WALL would turn red without a story (docs/demo.md §5).
    """
    identity = words.choice(scene.identities)
    rows = w.conn.execute(
        "SELECT memory_id, title, body FROM records WHERE scope_kind='identity' AND scope_key=?"
        " AND status_kind='active' AND ever_quarantined=0 ORDER BY updated_at_ms DESC LIMIT 5",
        (identity,)).fetchall()
    if not rows:
        return None
    memory_id, title, body = words.choice(rows)
    w.supersede(memory_id, title, words.revision(body), author=agent(identity),
                rationale="revised after a newer conversation")
    return f"{identity} updated '{title}'"


def steward_dreams(w: StoreWriter, scene: Scene, words: Phrasebook) -> str:
    """A dream: expire stale gates, accept clean proposals, gate tainted ones, rank, audit usage."""
    run, started = w.new_dream_run_id(), w.clock()
    expired = _expire_gates(w)
    accepted = gated = committed = 0
    for proposal_id, taint in w.conn.execute(
            "SELECT proposal_id, taint FROM proposals WHERE status='pending' AND proposal_id NOT IN"
            " (SELECT record_id FROM pending_promotions WHERE status='pending') ORDER BY created_at_ms").fetchall():
        if taint is None:
            receipt = w.accept_proposal(proposal_id, run_id=run, rationale="consistent with the mob's notes")
            committed += receipt.applied_ops
            accepted += 1
        else:  # §7.2: a tainted proposal's accept becomes an operator-gated promotion
            w.stage_gated_promotion(proposal_id, mob_scope(w.realm, scene.mob), run_id=run,
                                    rationale=f"useful for the whole mob, but {taint}")
            gated += 1
    ranked = [r[0] for r in w.conn.execute(
        "SELECT memory_id FROM records WHERE status_kind='active'"
        " ORDER BY json_extract(usage_stats, '$.injected_count') DESC, updated_at_ms DESC LIMIT 3")]
    if ranked:
        committed += w.steward_batch(run, [set_rank_op(m, n) for n, m in enumerate(ranked, 1)]).applied_ops
    verdicts = _usage_audit(w, ranked)
    w.record_dream_run(run, started_at_ms=started, ops_committed=committed,
                       phases=[("proposals", f"{accepted} accepted, {gated} gated"), ("gates", f"{expired} expired"),
                               ("rank", f"{len(ranked)} ranked"), ("usage_audit", f"{len(verdicts)} flagged")],
                       verdicts={"proposals_accepted": accepted, "proposals_gated": gated,
                                 "usage_load_bearing": 1 if ranked else 0, "usage_dead_weight": len(verdicts)},
                       audit_verdicts=verdicts)
    return f"steward dream {run}: {accepted} accepted, {gated} gated, {len(ranked)} ranked"


def _expire_gates(w: StoreWriter) -> int:
    """§7.3: promotions unresolved for 7 days are expired at the next dream."""
    stale = w.conn.execute("SELECT pending_id FROM pending_promotions WHERE status='pending' AND created_at_ms < ?",
                           (w.clock() - GATED_PROMOTION_EXPIRY_MS,)).fetchall()
    for (pending_id,) in stale:
        w.resolve_promotion(pending_id, "expired")
    return len(stale)


def _usage_audit(w: StoreWriter, ranked: list[str]) -> list[tuple[str, str, str]]:
    """load_bearing → judged_useful on the top record; one never-injected record is dead weight."""
    if ranked:
        judge_useful(w, ranked[0])
    dead = w.conn.execute("SELECT memory_id, usage_stats FROM records WHERE status_kind='active'"
                          " ORDER BY updated_at_ms ASC LIMIT 20").fetchall()
    unused = [m for m, stats in dead if not json.loads(stats or "{}").get("injected_count")]
    return [(unused[0], "dead_weight", "never injected since it was written")] if unused else []


def reviewer_verdict(w: StoreWriter, scene: Scene, words: Phrasebook) -> str | None:
    """An operator reviews the oldest quarantined record that no gate holds: release or tombstone."""
    row = w.conn.execute(
        "SELECT memory_id, title FROM records WHERE status_kind='quarantined' AND memory_id NOT IN"
        " (SELECT record_id FROM pending_promotions WHERE status='pending') ORDER BY created_at_ms LIMIT 1").fetchone()
    if row is None:
        return None
    decision, rationale = words.verdict()
    try:
        w.review_quarantine(row[0], decision, reviewer=OPERATOR_REVIEWER, rationale=rationale)
    except ReviewRefused:  # e.g. a claimant whose prior was superseded meanwhile (stale_update)
        decision = "tombstone"
        w.review_quarantine(row[0], decision, reviewer=OPERATOR_REVIEWER, rationale="no longer current")
    return f"operator {'released' if decision == 'release' else 'tombstoned'} quarantined '{row[1]}'"


def gate_approval(w: StoreWriter, scene: Scene, words: Phrasebook) -> str | None:
    """An operator approves the oldest live gated promotion: its staged batch is committed (§7.3)."""
    row = w.conn.execute("SELECT pending_id, record_id FROM pending_promotions WHERE status='pending'"
                         " ORDER BY created_at_ms LIMIT 1").fetchone()
    if row is None:
        return None
    w.resolve_promotion(row[0], "committed")
    return f"operator approved gated promotion {row[0]} of {row[1]} to the {scene.mob} mob"


# One round, in the order a newcomer sees it unfold: notes, a quarantine, proposals, recall, an
# update, a dream that gates a proposal, a review that drains the queue, the gate approved.
BEATS: tuple[Beat, ...] = (agent_remembers, tainted_write, agents_propose, recall_injects, agent_updates,
                           steward_dreams, reviewer_verdict, gate_approval)
