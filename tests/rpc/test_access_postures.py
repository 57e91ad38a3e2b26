"""MobKit's access control through /console/rpc: §2.6 postures as real access.toml files.

For each posture the expected rows, chain links, promotions and -32030 errors are derived here
from a small grant table (what the posture's rules say), not from the console's access code.
"""

from __future__ import annotations

import pytest

from tests.support.grants import GRANTS, REVIEW, Grants
from tests.support.postures import LEAD, SCOUT
from tests.support.rpc import PANEL, call, denied, panel
from tests.support.worlds import CLAIMANT_BODY, QUARANTINED_BODY, RETIRED_BODY
from tests.support.written import newest_first, overview_rows

pytestmark = pytest.mark.django_db

REALM_HISTORY = ("dreams", "overview", "proposals", "injections", "harvests", "dream_runs", "audit_verdicts")
PANEL_METHODS = ("records", "record", "quarantine", *REALM_HISTORY)
POSTURES = list(GRANTS)

CHAINS = {"route_v1": ["route_v1", "route_v2", "claimant"], "route_v2": ["route_v1", "route_v2", "claimant"],
          "claimant": ["route_v1", "route_v2", "claimant"]}


def expected_biography(world, grants: Grants, name: str) -> dict:
    row = world[name]
    chain = [world[n] for n in CHAINS.get(name, [name])]
    injections = []
    for item in sorted((i for i in world.injections if i["record_id"] == row.id), key=lambda i: -i["at_ms"]):
        entry = {"record_id": item["record_id"], "identity": item["identity"]}
        if item["session_key"] is not None:
            entry["session_key"] = item["session_key"]
        injections.append({**entry, "surface": item["surface"], "at_ms": item["at_ms"]})
    return {"realm": row.realm, "record": row.full(),
            "chain": [link.list_row() for link in chain if grants.sees(link)], "injections": injections}


@pytest.mark.parametrize("name", POSTURES)
def test_records_listing_holds_exactly_the_visible_rows(client, world, posture, name):
    posture(name)
    grants = GRANTS[name]
    want = [r.list_row() for r in newest_first(world.rows.values()) if grants.sees(r)]
    assert panel(client, "records", {}).result == {"records": want, "next_cursor": None, "realms": world.realms}


@pytest.mark.parametrize("name", POSTURES)
def test_record_detail_or_exact_denial_for_every_record(client, world, posture, name):
    posture(name)
    grants = GRANTS[name]
    for key, row in world.named.items():
        reply = panel(client, "record", {"memory_id": row.id})
        assert reply.status == 200
        if grants.sees(row):
            assert reply.result == expected_biography(world, grants, key), key
        else:
            assert reply.error == grants.denial(row), key


@pytest.mark.parametrize("name", POSTURES)
def test_records_entry_gates(client, world, posture, name):
    posture(name)
    grants = GRANTS[name]
    rows = world.rows.values()
    cases = [
        ({"scope": "mob"}, grants.mob, "mob.memory.read", None, lambda r: r.scope_kind == "mob"),
        ({"scope": "operator"}, grants.operator, "operator.memory.read", None, lambda r: r.scope_kind == "operator"),
        ({"identity": LEAD}, grants.scope_ok("identity", LEAD), "agent.memory.read", LEAD,
         lambda r: r.scope_key == LEAD),
        ({"identity": SCOUT}, grants.scope_ok("identity", SCOUT), "agent.memory.read", SCOUT,
         lambda r: r.scope_key == SCOUT),
        # realm scope and unscoped listings have no entry gate: rows are filtered instead.
        ({"scope": "realm"}, True, None, None, lambda r: r.scope_kind == "realm"),
        ({"status": "quarantined"}, True, None, None, lambda r: r.status_kind == "quarantined"),
    ]
    for params, allowed, action, resource, keep in cases:
        reply = panel(client, "records", params)
        if allowed:
            want = [r.list_row() for r in newest_first(rows) if keep(r) and grants.sees(r)]
            assert reply.result["records"] == want, params
        else:
            assert reply.error == denied(action, resource), params


@pytest.mark.parametrize("name", POSTURES)
def test_quarantine_queue(client, world, posture, name):
    posture(name)
    grants = GRANTS[name]
    reply = panel(client, "quarantine", {})
    if not grants.review:
        assert reply.error == denied(REVIEW, None)
        return
    queue = sorted((r for r in world.rows.values() if r.status_kind == "quarantined" and grants.sees(r)),
                   key=lambda r: (r.created_at_ms, r.id), reverse=True)
    promotions = [p for p in world.promotions if grants.scope_ok(p["scope_kind"], p["scope_key"])]
    assert reply.result == {"records": [r.list_row() for r in queue], "pending_promotions": promotions,
                            "realms": world.realms}
    if name == "bare_reviewer":  # review is necessary, not sufficient (docs/wire-contract.md §1.2 (c))
        assert reply.result["records"] == [] and reply.result["pending_promotions"] == []


@pytest.mark.parametrize("name", POSTURES)
@pytest.mark.parametrize("method", REALM_HISTORY)
def test_realm_wide_lists_need_unscoped_read(client, world, posture, name, method):
    posture(name)
    grants = GRANTS[name]
    reply = panel(client, method, {})
    if not grants.unscoped_read:
        assert reply.error == denied("agent.memory.read", None)
        return
    if method == "overview":
        # docs/access.md §2.8: without review, holdings count as if quarantined rows did not exist.
        rows = [r for r in world.rows.values() if grants.review or r.status_kind != "quarantined"]
        scopes = [s for s in overview_rows(rows) if grants.scope_ok(s["scope_kind"], s["scope_key"])]
        assert reply.result == {"scopes": scopes, "realms": world.realms,
                                "floors": {"records": 4000, "bytes": 33_554_432}}
        return
    key, items = {
        "dreams": ("runs", world.dreams), "proposals": ("proposals", world.proposals),
        "injections": ("injections", sorted(world.injections, key=lambda i: -i["at_ms"])),
        "harvests": ("harvests", world.harvests), "dream_runs": ("runs", world.dream_runs),
        "audit_verdicts": ("verdicts", world.audit_verdicts),
    }[method]
    assert reply.result == {key: items, "realms": world.realms}


@pytest.mark.parametrize("name", POSTURES)
def test_capabilities_list_only_usable_panel_methods(client, world, posture, name):
    posture(name)
    grants = GRANTS[name]
    methods = call(client, "mobkit/capabilities").result["methods"]
    usable = {"records", "record"} | ({"quarantine"} if grants.review else set()) | (
        set(REALM_HISTORY) if grants.unscoped_read else set())
    assert {m[len(PANEL):] for m in methods if m.startswith(PANEL) and m[len(PANEL):] in PANEL_METHODS} == usable
    assert "mobkit/capabilities" in methods
    assert len(methods) == len(set(methods))


@pytest.mark.parametrize("name", POSTURES)
def test_experience_memory_flags(client, world, posture, name):
    posture(name)
    grants = GRANTS[name]
    response = client.get("/console/experience")
    assert response.status_code == 200
    assert response.json()["memory"] == {"available": True, "can_read": grants.can_read,
                                         "can_review_quarantine": grants.review}


def test_experience_needs_a_caller(client, world):
    assert client.get("/console/experience").status_code == 401


def every_response(client, world) -> list[bytes]:
    """The raw bytes of every panel answer a caller can ask for about this world."""
    raws = []
    for method in ("records", "quarantine", *REALM_HISTORY):
        for params in ({}, {"realm": "default"}, {"limit": 200}):
            raws.append(panel(client, method, params).raw)
    for params in ({"status": "quarantined"}, {"status": "tombstoned"}, {"identity": SCOUT}, {"identity": LEAD},
                   {"scope": "identity", "scope_key": SCOUT, "status": "quarantined"}):
        raws.append(panel(client, "records", params).raw)
    for row in world.rows.values():
        raws.append(panel(client, "record", {"memory_id": row.id}).raw)
        raws.append(panel(client, "record", {"memory_id": row.id, "realm": row.realm}).raw)
    raws.append(call(client, "mobkit/capabilities").raw)
    raws.append(call(client, "mobkit/access/status").raw)
    return raws


@pytest.mark.parametrize("name", [n for n in POSTURES if not GRANTS[n].review])
def test_quarantined_bodies_never_reach_a_non_reviewer(client, world, posture, name):
    posture(name)
    for raw in every_response(client, world):
        for body in (QUARANTINED_BODY, CLAIMANT_BODY, RETIRED_BODY):
            assert body.encode() not in raw


@pytest.mark.parametrize("name", [n for n in POSTURES if GRANTS[n].review and n != "bare_reviewer"])
def test_reviewers_do_read_quarantined_bodies(client, world, posture, name):
    posture(name)  # the control for the search above: the same responses do carry them for a reviewer
    joined = b"".join(every_response(client, world))
    assert all(body.encode() in joined for body in (QUARANTINED_BODY, CLAIMANT_BODY, RETIRED_BODY))


@pytest.mark.parametrize("name", POSTURES)
def test_stage_token_never_leaves_the_store(client, world, posture, name):
    posture(name)
    assert world.stage_tokens
    for raw in every_response(client, world):
        assert b"stage_token" not in raw
        for token in world.stage_tokens:
            assert token.encode() not in raw


def test_retired_quarantine_evidence_is_reviewer_only(client, world, posture):
    retired, origin, successor = world["retired"], world["released_origin"], world["released"]
    posture("reader")
    assert panel(client, "record", {"memory_id": retired.id}).error == denied(REVIEW, retired.id)
    assert panel(client, "record", {"memory_id": origin.id}).error == denied(REVIEW, origin.id)
    # The released successor is ordinary memory; its biography shows no retired origin.
    assert panel(client, "record", {"memory_id": successor.id}).result["record"] == successor.full()
    tombstoned = panel(client, "records", {"status": "tombstoned"}).result["records"]
    assert [r["id"] for r in tombstoned] == [world["forgotten"].id]

    posture("reviewer")
    assert panel(client, "record", {"memory_id": retired.id}).result["record"] == retired.full()
    ids = {r["id"] for r in panel(client, "records", {"status": "tombstoned"}).result["records"]}
    assert ids == {retired.id, origin.id, world["forgotten"].id}


def test_access_edit_applies_to_the_next_call(client, world, posture, settings):
    posture("reader")
    assert panel(client, "quarantine", {}).error == denied(REVIEW, None)
    posture("reviewer")  # another file, another caller: both take effect on the next request
    assert panel(client, "quarantine", {}).result["records"]


def test_bearer_token_caller_gets_the_same_filtering(client, world, posture, settings):
    from mobkit_console.accounts.tokens import token_issue, user_for_subject

    posture("scoped")
    client.logout()
    token = token_issue(user=user_for_subject("user@example.test"))
    reply = panel(client, "records", {}, HTTP_AUTHORIZATION=f"Bearer {token}")
    grants = GRANTS["scoped"]
    assert reply.result["records"] == [r.list_row() for r in newest_first(world.rows.values()) if grants.sees(r)]
    assert panel(client, "dreams", {}, HTTP_AUTHORIZATION=f"Bearer {token}").error == denied("agent.memory.read", None)
