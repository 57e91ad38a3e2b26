"""Quarantine review, gated promotions, proposals and dream runs (docs/store-format.md §7.3–§7.5)."""

from __future__ import annotations

import json

import pytest

from memory_panel.simulator.store_writer import (
    ReviewRefused,
    StoreWriteError,
    agent,
    content_hash,
    create_op,
    identity_scope,
    mob_scope,
    new_record,
    verification_claim,
)

REALM = "default"
ANA = identity_scope(REALM, "identity:ana")
OPS = mob_scope(REALM, "ops")
TAINT = "evidence session tainted by web tool 'web_fetch' (session-tainted ⇒ range-tainted)"
OPERATOR_REVIEWER = {"kind": "operator", "principal": "maria@example.com"}


@pytest.fixture
def writer(realm_writer):
    return realm_writer(REALM)


def quarantined(writer, title="Lisbon office moved", body="Now on Avenida da Liberdade.") -> str:
    return writer.remember(ANA, title, body, kind="fact", tags=["lisbon"], author=agent("identity:ana"),
                           gate_reason=TAINT, verification=verification_claim("read the facilities page"))


def status(writer, memory_id):
    return writer.conn.execute("SELECT status_kind, status_detail FROM records WHERE memory_id=?",
                               (memory_id,)).fetchone()


def test_operator_release_creates_released_successor_and_tombstones_origin(writer):
    origin = quarantined(writer)
    result = writer.review_quarantine(origin, "release", reviewer=OPERATOR_REVIEWER, rationale="checked")
    successor = f"{origin}-released"
    assert (result.outcome, result.successor) == ("released", successor)
    assert status(writer, origin) == ("tombstoned", None)
    row = writer.conn.execute("SELECT status_kind, trust, derived_from, provenance, ever_quarantined, tags"
                              " FROM records WHERE memory_id=?", (successor,)).fetchone()
    assert row == ("active", "agent_observed", json.dumps([origin]),
                   '{"evidence":[],"author":{"author":"operator"},'
                   '"verification":{"checked":"read the facilities page","evidence":[]}}', 1, '["lisbon"]')
    audits = writer.conn.execute("SELECT stage_token, op_index, op_kind, memory_id, detail FROM audit"
                                 " WHERE stage_token LIKE 'review-%' ORDER BY op_index").fetchall()
    assert [(a[2], a[3]) for a in audits] == [("create", successor), ("tombstone", origin)]
    details = [json.loads(a[4]) for a in audits]
    assert [d["rationale"] for d in details] == ["operator quarantine release: checked",
                                                 "operator superseded by quarantine release"]
    assert details[0]["review"] == details[1]["review"] == {
        "verdict": "release", "reviewer": OPERATOR_REVIEWER, "origin": origin, "successor": successor,
        "expected_content_hash": content_hash("Lisbon office moved", "Now on Avenida da Liberdade."),
        "origin_quarantine_reason": TAINT, "rationale": "checked"}
    assert list(details[0]) == ["author", "op", "quarantined", "rationale", "review"]
    # Replaying the same decision is recognized from the audit row, and writes nothing.
    assert writer.review_quarantine(origin, "release", reviewer=OPERATOR_REVIEWER).outcome == "already_released"


def test_steward_tombstone_verdict_and_replay(writer):
    origin = quarantined(writer)
    result = writer.review_quarantine(origin, "tombstone", reviewer={"kind": "steward", "run_id": "dream-1-0"})
    assert result.outcome == "tombstoned" and result.successor is None
    detail = json.loads(writer.conn.execute("SELECT detail FROM audit WHERE memory_id=? AND op_kind='tombstone'",
                                            (origin,)).fetchone()[0])
    assert detail["author"] == {"author": "steward", "run_id": "dream-1-0"}
    assert detail["rationale"] == "quarantine tombstone"
    assert writer.review_quarantine(origin, "tombstone",
                                    reviewer={"kind": "steward", "run_id": "dream-1-0"}).outcome == "already_tombstoned"


def test_release_of_a_quarantined_update_supersedes_its_prior(writer):
    prior = writer.remember(ANA, "Office address", "Alcântara.")
    claimant = writer.supersede(prior, "Office address", "Avenida da Liberdade.", author=agent("identity:ana"),
                                gate_reason=TAINT)
    writer.review_quarantine(claimant, "release", reviewer=OPERATOR_REVIEWER)
    assert status(writer, prior) == ("superseded", f"{claimant}-released")


@pytest.mark.parametrize(("setup", "reason"), [
    ("wrong_hash", "content_mismatch"), ("active", "not_quarantined"), ("missing", "not_found"),
    ("foreign_scope", "not_found"), ("successor_taken", "successor_conflict"),
])
def test_review_refusals_write_nothing(writer, setup, reason):
    origin = quarantined(writer)
    kwargs = {}
    if setup == "wrong_hash":
        kwargs["expected_content_hash"] = "0" * 64
    elif setup == "active":
        origin = writer.remember(ANA, "Plain", "Active record.")
    elif setup == "missing":
        origin = "mem-missing"
    elif setup == "foreign_scope":
        kwargs["scope"] = identity_scope(REALM, "identity:luka")
    else:
        writer.remember(ANA, "Squatter", "Holds the id.", id=f"{origin}-released")
    before = writer.conn.execute("SELECT COUNT(*) FROM audit").fetchone()[0]
    with pytest.raises(ReviewRefused) as refused:
        writer.review_quarantine(origin, "release", reviewer=OPERATOR_REVIEWER, **kwargs)
    assert refused.value.reason == reason
    assert writer.conn.execute("SELECT COUNT(*) FROM audit").fetchone()[0] == before


def test_gated_promotion_blocks_review_until_resolved_and_commits_on_approval(writer, realm_writer):
    origin = quarantined(writer)
    pending_id = writer.stage_gated_promotion(origin, OPS, run_id="dream-1-0", rationale="whole mob needs it")
    row = writer.conn.execute("SELECT stage_token, record_id, scope_kind, scope_key, rationale, status"
                              " FROM pending_promotions WHERE pending_id=?", (pending_id,)).fetchone()
    assert row[1:] == (origin, "mob", "ops", "whole mob needs it", "pending")
    staged = json.loads(writer.conn.execute("SELECT batch FROM stage WHERE token=?", (row[0],)).fetchone()[0])
    assert staged["kind"] == "review_verdict"
    assert [op["rationale"] for op in staged["ops"]] == ["gated quarantine promotion: whole mob needs it",
                                                        "promoted to mob scope (gated)"]
    assert status(writer, origin)[0] == "quarantined"  # staged, not committed
    with pytest.raises(ReviewRefused) as refused:
        writer.review_quarantine(origin, "release", reviewer=OPERATOR_REVIEWER)
    assert refused.value.reason == "gate_pending" and refused.value.data["pending_id"] == pending_id
    with pytest.raises(StoreWriteError, match="already has a pending promotion"):
        writer.stage_gated_promotion(origin, OPS, run_id="dream-1-0", rationale="again")
    receipt = writer.resolve_promotion(pending_id, "committed")
    assert status(writer, origin)[0] == "tombstoned"
    assert writer.conn.execute("SELECT scope_kind, scope_key FROM records WHERE memory_id=?",
                               (receipt.memory_ids[0],)).fetchone() == ("mob", "ops")
    assert writer.conn.execute("SELECT status, resolved_at_ms FROM pending_promotions").fetchone() == (
        "committed", realm_writer.clock())


def test_denied_proposal_promotion_discards_the_stage_and_rejects_the_proposal(writer):
    proposal = writer.propose(OPS, new_record(kind="fact", title="Taxis take cards", body="Since March."),
                              author=agent("identity:ana"), taint=TAINT)
    assert proposal.startswith("prop-")
    pending_id = writer.stage_gated_promotion(proposal, OPS, run_id="dream-1-0", rationale="tainted")
    assert writer.resolve_promotion(pending_id, "denied") is None
    assert writer.conn.execute("SELECT COUNT(*) FROM stage").fetchone()[0] == 0
    assert writer.conn.execute("SELECT status, taint FROM proposals").fetchone() == ("rejected", TAINT)
    with pytest.raises(StoreWriteError, match="unknown promotion resolution 'maybe'"):
        writer.resolve_promotion(pending_id, "maybe")


def test_proposal_record_is_stored_as_given_and_status_is_checked(writer):
    record = new_record(kind="fact", title="  Not   normalized ", body="Body.", tags=["B", "a"])
    proposal = writer.propose(OPS, record, author=agent("identity:ana"))
    stored = writer.conn.execute("SELECT record, author, status, taint FROM proposals").fetchone()
    assert stored == ('{"kind":"fact","title":"  Not   normalized ","description":"","body":"Body.",'
                      '"tags":["B","a"],"evidence":[]}', '{"author":"agent","identity":"identity:ana"}',
                      "pending", None)
    with pytest.raises(StoreWriteError, match="unknown proposal status 'done'"):
        writer.set_proposal_status(proposal, "done")
    with pytest.raises(StoreWriteError, match="unknown proposal 'prop-x'"):
        writer.set_proposal_status("prop-x", "held")


def test_dream_run_writes_steward_batches_run_sheet_and_verdicts(writer, realm_writer):
    run = writer.new_dream_run_id()
    assert run == f"dream-{realm_writer.clock()}-0"
    receipt = writer.steward_batch(run, [create_op(OPS, new_record(kind="procedure", title="Checklist",
                                                                   body="1. Book. 2. File."))])
    writer.record_dream_run(run, started_at_ms=realm_writer.clock() - 5, ops_committed=receipt.applied_ops,
                            phases=[("consolidate", "1 op")], verdicts={"usage_dead_weight": 1},
                            skips=["rank: unchanged"],
                            audit_verdicts=[(receipt.memory_ids[0], "dead_weight", "never injected")])
    detail = writer.conn.execute("SELECT detail FROM dream_runs WHERE run_id=?", (run,)).fetchone()[0]
    parsed = json.loads(detail)
    assert parsed["phases"] == [["consolidate", "1 op"]] and parsed["skips"] == ["rank: unchanged"]
    assert len(parsed["verdicts"]) == 14 and parsed["verdicts"]["usage_dead_weight"] == 1
    author = json.loads(writer.conn.execute("SELECT detail FROM audit").fetchone()[0])["author"]
    assert author == {"author": "steward", "run_id": run}
    assert writer.conn.execute("SELECT verdict, rationale, resolved_at_ms FROM dream_audit_verdicts").fetchone() == (
        "dead_weight", "never injected", None)


def test_dream_runs_and_review_need_the_current_format(realm_writer):
    writer = realm_writer("legacy", format="older")
    with pytest.raises(StoreWriteError, match="current store format"):
        writer.record_dream_run("dream-1-0", started_at_ms=1, ops_committed=0)
