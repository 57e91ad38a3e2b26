"""Row effects of every op, audit rows, quarantine and validation (docs/store-format.md §2, §4, §7)."""

from __future__ import annotations

import json

import pytest

from memory_panel.simulator.store_writer import (
    APPLICATION,
    OPERATOR,
    StoreWriteError,
    agent,
    batch,
    content_hash,
    create_op,
    evidence_ref,
    identity_scope,
    mob_scope,
    new_record,
    retier_op,
    set_rank_op,
    steward,
    supersede_op,
    tombstone_op,
    verification_claim,
)

REALM = "default"
LUKA = identity_scope(REALM, "identity:luka")
TAINT = "session tainted by web tool 'web_fetch'"


def row(writer, memory_id: str) -> dict:
    cursor = writer.conn.execute("SELECT * FROM records WHERE memory_id=?", (memory_id,))
    names = [d[0] for d in cursor.description]
    return dict(zip(names, cursor.fetchone()))


def audit(writer) -> list[tuple]:
    return writer.conn.execute(
        "SELECT stage_token, op_index, op_kind, memory_id, detail, applied_at_ms FROM audit ORDER BY audit_id").fetchall()


def counts(writer) -> tuple[int, int, int]:
    return tuple(writer.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("records", "audit", "stage"))


@pytest.fixture
def writer(realm_writer):
    return realm_writer(REALM)


def test_remember_writes_mobkit_json_shapes(writer, realm_writer):
    memory_id = writer.remember(LUKA, "  Prefers   window\tseats ", "\n Asked twice. \n", kind="preference",
                                tags=["Travel", " travel", "SEATS"], description=" short   note ",
                                evidence=[evidence_ref("sess-1", 3, range_=(1, 4))],
                                verification=verification_claim("checked with Luka"))
    r = row(writer, memory_id)
    assert (r["title"], r["body"], r["description"]) == ("Prefers window seats", "Asked twice.", "short note")
    assert r["tags"] == '["seats","travel"]'
    assert r["provenance"] == ('{"evidence":[{"session_id":"sess-1","generation":3,"range":[1,4]}],'
                               '"author":{"author":"application"},'
                               '"verification":{"checked":"checked with Luka","evidence":[]}}')
    assert r["usage_stats"] == '{"injected_count":0,"explicit_recall_count":0,"judged_useful_count":0}'
    assert (r["scope_kind"], r["scope_key"], r["status_kind"], r["status_detail"]) == ("identity", "identity:luka", "active", None)
    assert r["content_hash"] == content_hash("Prefers window seats", "Asked twice.")
    assert r["created_at_ms"] == r["updated_at_ms"] == realm_writer.clock()
    assert (r["derived_from"], r["supersedes"], r["working_set_rank"], r["ever_quarantined"]) == ("[]", None, None, 0)


def test_exact_duplicate_returns_the_existing_record_and_writes_nothing(writer):
    first = writer.remember(LUKA, "Window seats", "Asked twice.")
    before = counts(writer)
    assert writer.remember(LUKA, "Window   seats", "  Asked twice.") == first
    assert counts(writer) == before
    # Another scope is not a duplicate.
    assert writer.remember(identity_scope(REALM, "identity:ana"), "Window seats", "Asked twice.") != first


def test_supersede_marks_prior_superseded_by_successor_and_inherits_rank(writer, realm_writer):
    prior = writer.remember(LUKA, "Window seats", "Asked twice.")
    writer.set_rank(prior, 4)
    realm_writer.clock.advance(1000)
    successor = writer.supersede(prior, "Aisle seats", "Changed his mind.")
    p, s = row(writer, prior), row(writer, successor)
    assert (p["status_kind"], p["status_detail"], p["updated_at_ms"]) == ("superseded", successor, realm_writer.clock())
    assert (s["supersedes"], s["scope_key"], s["working_set_rank"], s["rank_set_at_ms"]) == (prior, "identity:luka", 4, None)


def test_quarantined_supersede_leaves_prior_active_as_a_claimant(writer):
    prior = writer.remember(LUKA, "Window seats", "Asked twice.")
    claimant = writer.supersede(prior, "Any seat", "A web page said so.", author=agent("identity:luka"),
                                gate_reason=TAINT)
    p, c = row(writer, prior), row(writer, claimant)
    assert (p["status_kind"], p["status_detail"]) == ("active", None)
    assert (c["status_kind"], c["status_detail"], c["supersedes"], c["ever_quarantined"]) == ("quarantined", TAINT, prior, 1)


def test_every_op_writes_one_audit_row_with_alphabetical_detail(writer, realm_writer):
    target = writer.remember(LUKA, "Window seats", "Asked twice.")
    realm_writer.clock.advance(5)
    receipt = writer.apply_batch(batch(realm=REALM, author=OPERATOR, ops=[
        create_op(LUKA, new_record(kind="fact", title="Gate B", body="Oslo flights leave from gate B."),
                  rationale="from the itinerary"),
        supersede_op(target, new_record(kind="preference", title="Aisle", body="Aisle now.")),
        retier_op(target, "agent_verified", rationale="checked"),
        set_rank_op(target, 2),
        tombstone_op(target, rationale="obsolete"),
    ]))
    rows = audit(writer)[1:]
    assert [(r[1], r[2], r[3]) for r in rows] == [
        (0, "create", receipt.memory_ids[0]), (1, "supersede", receipt.memory_ids[1]),
        (2, "retier", target), (3, "set_rank", target), (4, "tombstone", target)]
    assert {r[0] for r in rows} == {receipt.token} and receipt.token.startswith("direct-")
    assert {r[5] for r in rows} == {realm_writer.clock()}
    assert rows[0][4] == '{"author":{"author":"operator"},"op":"create","quarantined":null,"rationale":"from the itinerary"}'
    assert json.loads(rows[3][4])["rationale"] is None  # set_rank never carries a rationale
    assert rows[4][4] == '{"author":{"author":"operator"},"op":"tombstone","quarantined":null,"rationale":"obsolete"}'


def test_tombstone_retier_and_set_rank_timestamps(writer, realm_writer):
    memory_id = writer.remember(LUKA, "Window seats", "Asked twice.")
    created = realm_writer.clock()
    realm_writer.clock.advance(10)
    writer.set_rank(memory_id, 1)
    assert (row(writer, memory_id)["updated_at_ms"], row(writer, memory_id)["rank_set_at_ms"]) == (created, created + 10)
    realm_writer.clock.advance(10)
    writer.retier(memory_id, "untrusted")
    assert row(writer, memory_id)["updated_at_ms"] == created + 20
    realm_writer.clock.advance(10)
    assert writer.forget(memory_id) is True
    r = row(writer, memory_id)
    assert (r["status_kind"], r["status_detail"], r["tombstoned_at_ms"], r["updated_at_ms"]) == (
        "tombstoned", None, created + 30, created + 30)
    assert writer.forget(memory_id) is False and writer.forget("mem-missing") is False


def test_quarantined_batch_marks_creates_only(writer):
    keep = writer.remember(LUKA, "Window seats", "Asked twice.")
    receipt = writer.apply_batch(batch(realm=REALM, author=agent("identity:luka"), ops=[
        create_op(LUKA, new_record(kind="fact", title="Scraped", body="From a forum.")),
        set_rank_op(keep, 1),
    ]), gate_reason=TAINT)
    assert row(writer, receipt.memory_ids[0])["status_kind"] == "quarantined"
    assert row(writer, keep)["status_kind"] == "active"
    details = [json.loads(r[4]) for r in audit(writer)[1:]]
    assert [d["quarantined"] for d in details] == [TAINT, None]


def test_ever_quarantined_follows_derived_from_and_supersede(writer):
    dirty = writer.remember(LUKA, "Scraped", "From a forum.", author=agent("identity:luka"), gate_reason=TAINT)
    clean = writer.remember(LUKA, "Clean", "From Luka himself.")
    child = writer.remember(LUKA, "Child", "Builds on the scraped note.", derived_from=[dirty])
    grandchild = writer.remember(LUKA, "Grandchild", "Builds on the child.", derived_from=[child])
    sibling = writer.remember(LUKA, "Sibling", "Builds on the clean note.", derived_from=[clean])
    successor = writer.supersede(child, "Child v2", "Rewritten.")
    assert [row(writer, i)["ever_quarantined"] for i in (dirty, clean, child, grandchild, sibling, successor)] == [
        1, 0, 1, 1, 0, 1]


@pytest.mark.parametrize(("author", "ops", "message"), [
    (APPLICATION, [], "between 1 and 1024"),
    (APPLICATION, [tombstone_op("mem-x")] * 1025, "between 1 and 1024"),
    (APPLICATION, [create_op(identity_scope("other", "identity:luka"),
                             new_record(kind="fact", title="t", body="b"))], "batch realm"),
    (APPLICATION, [create_op(LUKA, new_record(kind="fact", title="   ", body="b"))], "title must not be empty"),
    (APPLICATION, [create_op(LUKA, new_record(kind="fact", title="t" * 201, body="b"))], "at most 200 bytes"),
    (APPLICATION, [create_op(LUKA, new_record(kind="fact", title="t", body="b", description="d" * 401))],
     "at most 400 bytes"),
    (APPLICATION, [create_op(LUKA, new_record(kind="fact", title="t", body="b" * 65537))], "at most 65536 bytes"),
    (APPLICATION, [create_op(LUKA, new_record(kind="fact", title="t", body="b", tags=["x"] * 33))],
     "at most 32 entries"),
    (APPLICATION, [create_op(LUKA, new_record(kind="fact", title="t", body="b", tags=["x" * 65]))],
     "at most 64 bytes"),
    (APPLICATION, [create_op(LUKA, new_record(kind="rumour", title="t", body="b"))], "unknown memory kind"),
    (APPLICATION, [create_op(LUKA, new_record(kind="fact", title="t", body="password = hunter2hunter2"))],
     "credential-assignment"),
    (agent("identity:luka"), [create_op(LUKA, new_record(kind="fact", title="t", body="b"), trust="agent_verified")],
     "above agent_observed"),
    (agent("identity:ana"), [create_op(LUKA, new_record(kind="fact", title="t", body="b"))], "own identity scope"),
    (steward("dream-1-0"), [create_op(LUKA, new_record(kind="fact", title="t", body="b"), trust="application")],
     "cannot be assigned"),
    (APPLICATION, [create_op(LUKA, new_record(kind="fact", title="ok", body="b")),
                   supersede_op("mem-missing", new_record(kind="fact", title="t", body="b"))], "does not exist"),
])
def test_invalid_batches_raise_and_write_nothing(writer, author, ops, message):
    writer.remember(LUKA, "Existing", "Already here.")
    before = counts(writer)
    with pytest.raises(StoreWriteError, match=message):
        writer.apply_batch(batch(realm=REALM, author=author, ops=ops))
    assert counts(writer) == before


def test_supersede_requires_an_active_prior(writer):
    prior = writer.remember(LUKA, "Window seats", "Asked twice.")
    writer.supersede(prior, "Aisle seats", "Changed.")
    before = counts(writer)
    with pytest.raises(StoreWriteError, match="NotActive"):
        writer.supersede(prior, "Middle seats", "Again.")
    assert counts(writer) == before


def test_steward_retier_to_verified_needs_a_verification_claim(writer):
    bare = writer.remember(LUKA, "Bare", "No claim.")
    claimed = writer.remember(LUKA, "Claimed", "Has a claim.", verification=verification_claim("asked Luka"))
    with pytest.raises(StoreWriteError, match="UnverifiedRetier"):
        writer.retier(bare, "agent_verified", author=steward("dream-1-0"))
    writer.retier(claimed, "agent_verified", author=steward("dream-1-0"))
    assert row(writer, claimed)["trust"] == "agent_verified"


def test_raising_trust_over_a_quarantined_ancestor_hits_the_transitive_ceiling(writer):
    dirty = writer.remember(LUKA, "Scraped", "From a forum.", author=agent("identity:luka"), gate_reason=TAINT)
    with pytest.raises(StoreWriteError, match="TransitiveTaintCeiling"):
        writer.remember(LUKA, "Built on it", "Derived.", trust="application", derived_from=[dirty])


def test_llm_author_cannot_recreate_recently_tombstoned_content(writer, realm_writer):
    luka = agent("identity:luka")
    memory_id = writer.remember(LUKA, "Window seats", "Asked twice.", author=luka)
    writer.forget(memory_id, author=luka)
    with pytest.raises(StoreWriteError, match="TombstoneRecreation"):
        writer.remember(LUKA, "Window seats", "Asked twice.", author=luka)
    assert writer.remember(LUKA, "Window seats", "Asked twice.") != memory_id  # non-LLM re-adds pass
    realm_writer.clock.advance(7 * 86_400_000 + 1)
    writer.remember(identity_scope(REALM, "identity:luka"), "Other", "Unrelated.", author=luka)


def test_gate_never_quarantines_a_non_llm_author(writer):
    with pytest.raises(StoreWriteError, match="non-LLM"):
        writer.remember(LUKA, "t", "b", gate_reason=TAINT)


def test_stage_then_commit_applies_with_the_stage_token(writer):
    staged = batch(realm=REALM, author=steward("dream-1-0"), kind="review_verdict",
                   ops=[create_op(mob_scope(REALM, "ops"), new_record(kind="fact", title="Mob fact", body="Shared."))])
    token = writer.stage(staged)
    assert token.startswith("stage-")
    assert writer.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 0
    stored = json.loads(writer.conn.execute("SELECT batch FROM stage WHERE token=?", (token,)).fetchone()[0])
    assert list(stored) == ["realm", "author", "kind", "ops"] and stored["kind"] == "review_verdict"
    receipt = writer.commit(token)
    assert receipt.token == token and audit(writer)[0][0] == token
    assert writer.conn.execute("SELECT COUNT(*) FROM stage").fetchone()[0] == 0
    with pytest.raises(StoreWriteError, match="unknown or expired stage token"):
        writer.commit(token)


def test_staged_batches_may_not_assign_application_trust(writer):
    with pytest.raises(StoreWriteError, match="cannot be assigned"):
        writer.stage(batch(realm=REALM, author=APPLICATION, ops=[
            create_op(LUKA, new_record(kind="fact", title="t", body="b"), trust="application")]))


def test_usage_marks_and_injections(writer, realm_writer):
    memory_id = writer.remember(LUKA, "Window seats", "Asked twice.")
    writer.record_injection(memory_id, "identity:luka", surface="build", at_ms=100)
    writer.record_injection(memory_id, "identity:luka", surface="turn", session_key="sess-2", at_ms=200)
    writer.mark_usage(memory_id, "judged_useful", at_ms=300)
    r = row(writer, memory_id)
    assert r["usage_stats"] == ('{"injected_count":2,"last_injected_at_ms":200,"explicit_recall_count":0,'
                                '"judged_useful_count":1,"last_useful_at_ms":300}')
    assert r["updated_at_ms"] == realm_writer.clock()
    assert writer.conn.execute("SELECT record_id, identity, session_key, surface, at_ms FROM injections").fetchall() == [
        (memory_id, "identity:luka", None, "build", 100), (memory_id, "identity:luka", "sess-2", "turn", 200)]
    with pytest.raises(StoreWriteError, match="unknown injection surface"):
        writer.record_injection(memory_id, "identity:luka", surface="email")


def test_injection_of_an_unknown_record_writes_nothing(writer):
    with pytest.raises(StoreWriteError, match="does not exist"):
        writer.record_injection("mem-missing", "identity:luka")
    assert writer.conn.execute("SELECT COUNT(*) FROM injections").fetchone()[0] == 0
    with pytest.raises(StoreWriteError, match="unknown usage event"):
        writer.mark_usage("mem-missing", "liked")
