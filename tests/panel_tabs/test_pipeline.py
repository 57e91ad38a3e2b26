"""GET /console/memory/pipeline/: the conveyor with real counts, taint, the gate, the queue (reviewers)."""

from __future__ import annotations

import re

import pytest

from memory_panel.simulator.store_writer import agent, identity_scope, mob_scope, new_record
from tests.support.postures import READER, REVIEWER, SCOUT_READER as SCOPED
from tests.support.rpc import call_ok

URL = "/console/memory/pipeline/"
TAINT = "session tainted by web tool 'web_fetch'"


@pytest.fixture
def realm(realm_writer):
    w = realm_writer("default")
    ops = mob_scope("default", "ops")
    w.propose(ops, new_record(kind="fact", title="Clean tip", body="Use the front door."), author=agent("identity:luka"))
    w.propose(ops, new_record(kind="fact", title="Forum tip", body="Use the side door."), author=agent("identity:luka"),
              taint=TAINT)
    held = w.propose(ops, new_record(kind="fact", title="Held tip", body="Wait."), author=agent("identity:ana"))
    w.set_proposal_status(held, "held")
    accepted = w.propose(ops, new_record(kind="fact", title="Accepted", body="Yes."), author=agent("identity:ana"))
    w.accept_proposal(accepted, run_id="dream-1", rationale="fine")
    gated = w.propose(ops, new_record(kind="fact", title="Gated", body="Needs the gate."), author=agent("identity:ana"))
    w.stage_gated_promotion(gated, ops, run_id="dream-1", rationale="tainted accept goes to the gate")
    w.remember(identity_scope("default", "identity:mira"), "Quarantined claim", "From the forum.",
               author=agent("identity:mira"), gate_reason=TAINT)
    return w


def stages(page: str) -> dict[str, str]:
    return dict(re.findall(r'data-stage="([a-z-]+)"><span class="small muted">[A-Z ]+</span><strong>(.*?)</strong>', page))


def test_conveyor_counts_every_stage_of_the_store_for_a_reviewer(client_for, realm, posture):
    posture("standard")
    page = client_for(REVIEWER).get(URL).content.decode()

    assert stages(page) == {"proposed": "3", "held": "1", "pending-gate": "1", "committed": "1", "quarantined": "1"}
    assert "Quarantined claim" in page and "tainted accept goes to the gate" in page


def test_reader_sees_the_flow_but_no_grant_for_quarantine(client_for, realm, posture):
    posture("standard")
    page = client_for(READER).get(URL).content.decode()

    assert stages(page)["proposed"] == "3"
    assert "no grant" in stages(page)["quarantined"]
    assert "Quarantined claim" not in page
    assert "<code>memory.quarantine.review</code>" in page


def test_tainted_proposal_shows_its_propose_time_taint(client_for, realm):
    page = client_for().get(URL).content.decode()
    row = page.split("Forum tip", 1)[1].split("</tr>", 1)[0]

    assert "tainted" in row and "session tainted by web tool &#x27;web_fetch&#x27;" in row
    assert 'chip--warn">tainted' not in page.split("Clean tip", 1)[1].split("</tr>", 1)[0]


def test_scoped_reader_gets_no_grant_for_realm_wide_sections(client_for, realm, posture):
    posture("standard")
    page = client_for(SCOPED).get(URL).content.decode()

    assert "data-stage" not in page
    assert page.count('class="no-grant"') == 4  # conveyor, proposals, quarantine queue, review queue


def test_quarantine_route_keeps_serving_the_queue_alone(client_for, realm):
    response = client_for().get("/console/memory/quarantine/")

    assert response.status_code == 200
    assert "Quarantined claim" in response.content.decode()
    assert "data-stage" not in response.content.decode()


def test_htmx_request_gets_the_pipeline_fragment(client_for, realm):
    response = client_for().get(URL, headers={"HX-Request": "true"})

    assert response.content.decode().lstrip().startswith('<section id="pipeline"')


def test_the_live_refetch_brings_a_new_quarantined_write_to_a_reviewer_and_never_to_a_reader(client_for, realm, posture):
    # docs/timeline-live.md §2: the open page re-fetches its own fragment, so the view's checks decide.
    posture("standard")
    body = "FORUM-BODY-OMEGA wire the deposit today"
    new_id = realm.remember(identity_scope("default", "identity:mira"), "Second forum claim", body,
                            author=agent("identity:mira"), gate_reason=TAINT)

    reviewer = client_for(REVIEWER).get(URL, headers={"HX-Request": "true"}).content.decode()
    reader = client_for(READER).get(URL, headers={"HX-Request": "true"}).content.decode()

    assert reviewer.lstrip().startswith('<section id="pipeline"')
    assert f'data-live-key="{new_id}"' in reviewer and "Second forum claim" in reviewer
    assert stages(reviewer)["quarantined"] == "2"
    assert reader.lstrip().startswith('<section id="pipeline"')
    assert "no grant" in stages(reader)["quarantined"]
    assert new_id not in reader and "Second forum claim" not in reader and body not in reader


def _flag_in_runs(w, record_id: str, runs: int, *, verdict: str = "dead_weight") -> None:
    for n in range(runs):
        w.record_dream_run(f"dream-flag-{record_id[-6:]}-{n}", started_at_ms=w.clock(), ops_committed=0,
                           audit_verdicts=[(record_id, verdict, f"never injected (run {n})")])
        w.clock.advance(60_000)


def test_review_queue_lists_each_record_once_with_its_open_verdicts(client_for, realm):
    scope = identity_scope("default", "identity:luka")
    handbook = realm.remember(scope, "Travel policy handbook", "Read it.", author=agent("identity:luka"))
    loop = realm.remember(scope, "Passport renewal", "In progress.", author=agent("identity:luka"))
    _flag_in_runs(realm, handbook, 15)
    _flag_in_runs(realm, loop, 1, verdict="unknown")
    client = client_for()

    page = client.get(URL).content.decode()
    queue = page.split("Review queue", 1)[1]
    on_the_wire = call_ok(client, "mobkit/memory/panel/audit_verdicts", {})["result"]["verdicts"]

    assert queue.count("Travel policy handbook") == 1 and queue.count("Passport renewal") == 1
    assert re.findall(r'data-review-record="([^"]+)"', queue) == [loop, handbook]  # newest verdict first
    assert dict(re.findall(r'data-review-record="([^"]+)".*?data-open-verdicts="(\d+)"', queue, re.S)) == {
        handbook: "15", loop: "1"}
    assert "never injected (run 14)" in queue  # the newest rationale
    assert len(on_the_wire) == 16  # panel/audit_verdicts keeps MobKit's row per verdict
