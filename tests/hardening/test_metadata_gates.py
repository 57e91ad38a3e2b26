"""Metadata never crosses a deny (the decisions of docs/access.md §2.8).

- an injection or harvest row is its identity's memory activity: it needs read *and* view on that
  identity, and the record it names must be visible too;
- a caller who may not review counts holdings as if quarantined rows did not exist;
- a record of a scope kind MobKit does not define is visible to whoever may read every known kind
  (admins included), and a denial names the grant that is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from memory_panel.simulator.store_writer import (
    agent,
    identity_scope,
    mob_scope,
    new_record,
    operator_scope,
    retier_op,
)
from tests.hardening.support import rpc
from tests.support.postures import HEADER, READS, REVIEWER, REVIEWS, ROOT

pytestmark = pytest.mark.django_db

USER = "user@example.test"
SCOUT, LEAD = "identity:scout", "identity:lead"
NOT_LEAD = """
[[rules]]
id = "reads-but-not-lead"
actions = ["agent.view", "mob.observe", "agent.memory.read", "mob.memory.read"]

[[rules]]
id = "lead-memory-denied"
effect = "deny"
actions = ["agent.memory.read"]
agents = ["identity:lead"]
"""
POSTURES = {
    "not_lead": HEADER + NOT_LEAD,
    "reader": HEADER + READS,
    "reviewer": HEADER + READS + REVIEWS,
    "partial": HEADER
    + """
[[rules]]
id = "no-operator"
actions = ["agent.view", "agent.memory.read", "mob.memory.read"]
""",
}


@pytest.fixture
def as_subject(tmp_path: Path, settings):
    def use(posture: str | None, subject: str = USER) -> Client:
        if posture is None:
            settings.MOBKIT_ACCESS_CONFIG = None
        else:
            path = tmp_path / f"{posture}.toml"
            path.write_text(POSTURES[posture], encoding="utf-8")
            settings.MOBKIT_ACCESS_CONFIG = path
        user, _ = get_user_model().objects.get_or_create(username=subject, defaults={"email": subject})
        client = Client()
        client.force_login(user)
        return client

    return use


@pytest.fixture
def realm(realm_writer):
    w = realm_writer("default")
    ids = {
        "scout": w.remember(identity_scope("default", SCOUT), "Scout fact", "scout body"),
        "lead": w.remember(identity_scope("default", LEAD), "Lead fact", "lead body"),
        "mob": w.remember(mob_scope("default", "ops"), "Ops fact", "ops body"),
        "operator": w.remember(operator_scope("default", "oncall"), "Oncall fact", "oncall body"),
        "quarantined": w.remember(identity_scope("default", SCOUT), "Taint", "QUARANTINED-BODY",
                                  author=agent(SCOUT), gate_reason="tainted"),
        "only_quarantined": w.remember(identity_scope("default", "identity:ghost"), "Ghost", "GHOST-BODY",
                                       author=agent("identity:ghost"), gate_reason="tainted"),
        "unknown": w.remember(mob_scope("default", "future"), "Future scope fact", "future body"),
    }
    w.conn.execute("UPDATE records SET scope_kind = 'team' WHERE memory_id = ?", (ids["unknown"],))
    w.record_injection(ids["scout"], SCOUT, surface="turn", session_key="sess-scout-1")
    w.record_injection(ids["lead"], LEAD, surface="turn", session_key="sess-lead-SECRET")
    w.record_injection(ids["mob"], LEAD, surface="build", session_key="sess-lead-SECRET-2")
    w.record_injection(ids["operator"], SCOUT, surface="build", session_key="sess-scout-operator")
    w.add_pending_harvest(LEAD, session_key="sess-lead-harvest")
    w.add_pending_harvest(SCOUT, session_key="sess-scout-harvest")
    return ids


def test_injections_of_an_identity_denied_memory_read_are_left_out(realm, as_subject):
    client = as_subject("not_lead")
    reply = rpc(client, "mobkit/memory/panel/injections", {})
    rows = reply["result"]["injections"]
    # Lead's rows go (read denied on lead); scout's operator-record row goes (operator not readable).
    assert [(row["record_id"], row["session_key"]) for row in rows] == [(realm["scout"], "sess-scout-1")]
    assert b"SECRET" not in json.dumps(reply).encode()
    harvests = rpc(client, "mobkit/memory/panel/harvests", {})["result"]["harvests"]
    assert [row["identity"] for row in harvests] == [SCOUT]


def test_a_visible_records_biography_leaves_out_injections_of_a_denied_identity(realm, as_subject):
    client = as_subject("not_lead")
    bio = rpc(client, "mobkit/memory/panel/record", {"memory_id": realm["mob"]})["result"]
    assert bio["injections"] == []
    page = client.get(f"/console/memory/records/{realm['mob']}/")
    assert page.status_code == 200 and "SECRET" not in page.content.decode()


def test_an_unrestricted_reader_still_sees_every_injection(realm, as_subject):
    rows = rpc(as_subject("reader"), "mobkit/memory/panel/injections", {})["result"]["injections"]
    assert len(rows) == 4
    bio = rpc(as_subject(None), "mobkit/memory/panel/record", {"memory_id": realm["mob"]})["result"]
    assert [row["session_key"] for row in bio["injections"]] == ["sess-lead-SECRET-2"]


def _scopes(client) -> dict[tuple[str, str], dict]:
    result = rpc(client, "mobkit/memory/panel/overview", {})["result"]
    return {(s["scope_kind"], s["scope_key"]): s for s in result["scopes"]}


def test_holdings_count_no_quarantined_rows_for_a_caller_who_may_not_review(realm, as_subject):
    reader = _scopes(as_subject("reader"))
    assert reader[("identity", SCOUT)]["quarantined"] == 0
    assert reader[("identity", SCOUT)]["body_bytes"] == len("scout body")
    assert ("identity", "identity:ghost") not in reader  # a scope holding nothing a reader may see
    page = as_subject("reader").get("/console/memory/").content.decode()
    assert "identity:ghost" not in page

    reviewer = _scopes(as_subject("reviewer", REVIEWER))
    assert reviewer[("identity", SCOUT)]["quarantined"] == 1
    assert reviewer[("identity", SCOUT)]["body_bytes"] == len("scout body") + len("QUARANTINED-BODY")
    assert reviewer[("identity", "identity:ghost")]["quarantined"] == 1


@pytest.mark.parametrize(("posture", "subject"), [(None, USER), ("reader", ROOT), ("reader", USER)])
def test_a_record_of_an_unknown_scope_kind_is_visible_to_a_caller_who_reads_every_kind(realm, as_subject, posture, subject):
    client = as_subject(posture, subject)
    listed = rpc(client, "mobkit/memory/panel/records", {})["result"]["records"]
    unknown = next(row for row in listed if row["id"] == realm["unknown"])
    assert unknown["scope"] == {"scope": "team", "realm": "default", "key": "future"}
    assert "scope_kind" in unknown["malformed_columns"]
    assert rpc(client, "mobkit/memory/panel/record", {"memory_id": realm["unknown"]})["result"]["record"]["title"] == "Future scope fact"
    assert client.get(f"/console/memory/records/{realm['unknown']}/").status_code == 200


def test_a_record_of_an_unknown_scope_kind_names_the_missing_grant_when_denied(realm, as_subject):
    client = as_subject("partial")
    listed = rpc(client, "mobkit/memory/panel/records", {})["result"]["records"]
    assert realm["unknown"] not in {row["id"] for row in listed}
    error = rpc(client, "mobkit/memory/panel/record", {"memory_id": realm["unknown"]})["error"]
    assert error["code"] == -32030
    assert error["data"] == {"kind": "access_denied", "action": "operator.memory.read", "resource": realm["unknown"]}


@pytest.fixture
def dreamt(realm, realm_writer):
    """A steward run that re-tiered scout's, lead's and a quarantined record, and left verdicts on each."""
    w = realm_writer.writers[0]
    run = w.new_dream_run_id()
    w.steward_batch(run, [
        retier_op(realm["scout"], "untrusted", rationale="SCOUT-RATIONALE"),
        retier_op(realm["lead"], "untrusted", rationale="LEAD-RATIONALE-SECRET"),
        retier_op(realm["quarantined"], "untrusted", rationale="QUARANTINED-RATIONALE-SECRET"),
    ])
    w.record_dream_run(run, started_at_ms=0, ops_committed=3, audit_verdicts=[
        (realm["scout"], "dead_weight", "SCOUT-VERDICT"),
        (realm["lead"], "dead_weight", "LEAD-VERDICT-SECRET"),
        (realm["quarantined"], "dead_weight", "QUARANTINED-VERDICT-SECRET"),
    ])
    return realm


def test_dreams_and_verdicts_name_no_record_of_an_identity_denied_memory_read(dreamt, as_subject):
    client = as_subject("not_lead")
    hidden = (dreamt["lead"], dreamt["quarantined"], "SECRET")
    runs = rpc(client, "mobkit/memory/panel/dreams", {})["result"]["runs"]
    assert [(run["memory_ids"], run["rationales"]) for run in runs] == [([dreamt["scout"]], ["SCOUT-RATIONALE"])]
    assert runs[0]["ops"] == 3  # counts carry no content (docs/access.md §2.8)
    verdicts = rpc(client, "mobkit/memory/panel/audit_verdicts", {})["result"]["verdicts"]
    assert [(row["record_id"], row["rationale"]) for row in verdicts] == [(dreamt["scout"], "SCOUT-VERDICT")]
    for path in ("/console/memory/dreams/", "/console/memory/pipeline/"):
        page = client.get(path).content.decode()
        assert not [text for text in hidden if text in page], path


def test_a_reviewer_sees_every_record_a_dream_touched(dreamt, as_subject):
    client = as_subject("reviewer", REVIEWER)
    runs = rpc(client, "mobkit/memory/panel/dreams", {})["result"]["runs"]
    assert sorted(runs[0]["memory_ids"]) == sorted([dreamt["scout"], dreamt["lead"], dreamt["quarantined"]])
    verdicts = rpc(client, "mobkit/memory/panel/audit_verdicts", {})["result"]["verdicts"]
    assert len(verdicts) == 3


@pytest.fixture
def busy(realm, realm_writer):
    """Twenty more rows each of lead's and scout's injections, harvests and proposals, interleaved."""
    w = realm_writer.writers[0]
    for n in range(20):
        for identity, record in ((LEAD, realm["lead"]), (SCOUT, realm["scout"])):
            w.clock.advance(1000)
            w.record_injection(record, identity, surface="turn", session_key=f"{identity}-{n}")
            w.add_pending_harvest(identity, session_key=f"{identity}-harvest-{n}")
            w.propose(identity_scope("default", identity), new_record(kind="fact", title=f"{identity} {n}", body="b"),
                      author=agent(identity))
    return realm


@pytest.mark.parametrize(("method", "key"), [("injections", "injections"), ("harvests", "harvests"), ("proposals", "proposals")])
def test_a_list_filtered_for_a_caller_still_fills_its_limit(busy, as_subject, method, key):
    """docs/access.md §2.8: filter, then limit — lead's rows are hidden, scout's fill the page."""
    rows = rpc(as_subject("not_lead"), f"mobkit/memory/panel/{method}", {"limit": 20})["result"][key]
    assert len(rows) == 20
    assert all(LEAD not in json.dumps(row) for row in rows)
    everything = rpc(as_subject("reader"), f"mobkit/memory/panel/{method}", {"limit": 20})["result"][key]
    assert len(everything) == 20 and any(LEAD in json.dumps(row) for row in everything)
