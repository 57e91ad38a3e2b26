"""GET /console/memory/knowledge/: composition by scope, the injection budget, history with DUP badges."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from memory_panel.selectors.recall import render_injection_block
from memory_panel.simulator.store_writer import identity_scope, mob_scope, operator_scope, realm_scope
from tests.support.postures import NO_OPERATOR, SCOUT_READER as SCOPED

URL = "/console/memory/knowledge/"
LUKA = "identity:luka"
BIG_BODY = "word " * 600  # 3,000 bytes: past the 2 KiB body cut


@pytest.fixture
def realm(realm_writer):
    w = realm_writer("default")
    ids = {}
    luka = identity_scope("default", LUKA)
    ids["a"] = w.remember(luka, "Window seat", "Prefers the window.")
    ids["b"] = w.remember(luka, "Long notes", BIG_BODY)
    w.remember(luka, "Third", "Three.")
    w.remember(identity_scope("default", "identity:ana"), "Ana's", "Not luka's.")
    ids["mob"] = w.remember(mob_scope("default", "ops"), "Deploy day", "Tuesday.")
    w.remember(mob_scope("default", "travel"), "Per diem", "Capped.")
    w.remember(operator_scope("default", "oncall"), "Rota", "Mondays.")
    w.remember(realm_scope("default"), "Realm fact", "Shared.")
    w.clock.advance(1000)
    at = w.clock()
    for record in (ids["a"], ids["b"]):  # one build assembly: two blocks at the same moment
        w.record_injection(record, LUKA, surface="build", at_ms=at)
    for n, record in enumerate((ids["mob"], ids["a"], ids["a"], ids["mob"], ids["a"])):
        w.clock.advance(1000)
        w.record_injection(record, LUKA, surface="turn", session_key="sess-1")
    return ids


def composition(page: str) -> dict[str, str]:
    parts = re.findall(r'data-part="([a-z]+)">\s*<span class="small muted">[^<]*</span>\s*<strong>(.*?)</strong>', page, re.S)
    return {kind: re.sub(r"<[^>]+>", "", value).strip() for kind, value in parts}


def test_composition_counts_each_scope_of_the_store(client_for, realm):
    page = client_for().get(URL, {"identity": LUKA}).content.decode()

    assert composition(page) == {"identity": "3", "mob": "2", "operator": "1", "realm": "1"}


def test_composition_names_each_scope_once_in_words(client_for, realm):
    page = client_for().get(URL, {"identity": LUKA}).content.decode()

    labels = re.findall(r'data-part="[a-z]+">\s*<span class="small muted">([^<]*)</span>', page)
    assert labels == [LUKA, "mob", "operator", "realm"]  # not "identity identity:luka"


def test_a_part_the_caller_may_not_read_says_no_grant(client_for, realm, posture):
    posture("standard")
    page = client_for(NO_OPERATOR).get(URL, {"identity": LUKA}).content.decode()

    assert composition(page)["operator"] == "no grant"
    assert "<code>operator.memory.read</code>" in page
    assert composition(page)["identity"] == "3"


def test_scoped_reader_sees_its_identity_and_no_grant_elsewhere(client_for, realm, posture):
    posture("standard")
    client = client_for(SCOPED)

    assert composition(client.get(URL).content.decode()) == {
        "identity": "3", "mob": "no grant", "operator": "no grant", "realm": "no grant"}
    other = client.get(URL, {"identity": "identity:ana"}).content.decode()
    assert "No grant." in other and "Ana&#x27;s" not in other


def test_history_marks_dup_when_the_next_older_row_repeats_the_record(client_for, realm):
    page = client_for().get(URL, {"identity": LUKA}).content.decode()
    rows = re.findall(r'<tr data-injection="\d+">(.*?)</tr>', page, re.S)

    # newest first: a, mob, a, a(DUP of the a before it), mob, then the build rows b and a
    dups = ["DUP" in row for row in rows]
    assert dups == [False, False, True, False, False, False, False]


def test_budget_gauge_measures_rendered_blocks_as_the_runtime_does(client_for, realm):
    page = client_for().get(URL, {"identity": LUKA}).content.decode()

    def rendered(title: str, body: str) -> int:
        block = render_injection_block(identity=LUKA, realm="default", records=[SimpleNamespace(title=title, body=body)])
        return len(block.encode("utf-8"))

    used = dict(re.findall(r'data-gauge="([a-z ]+)" data-used="(\d+)"', page))
    assert int(used["per session"]) == 3 * rendered("Window seat", "Prefers the window.") + 2 * rendered("Deploy day", "Tuesday.")
    assert int(used["per assembly"]) == rendered("Window seat", "Prefers the window.")
    assert int(used["per record"]) == len(BIG_BODY.strip().encode("utf-8"))
    assembly = page.split('data-gauge="per assembly"', 1)[1].split("</div>", 1)[0]
    assert "the newest assembly (turn, 1 record)" in assembly
    per_record = page.split('data-gauge="per record"', 1)[1].split("</div>", 1)[0]
    assert "1 of 3 injected records cut at 2 KiB of body" in per_record
    session = page.split('data-gauge="per session"', 1)[1].split("</div>", 1)[0]
    assert "the busiest session, sess-1" in session


def test_recall_preview_is_one_click_away(client_for, realm):
    page = client_for().get(URL, {"identity": LUKA}).content.decode()

    assert 'href="/console/memory/recall/?identity=identity%3Aluka"' in page


def test_mob_lens_composes_that_mob_with_operator_and_realm(client_for, realm):
    page = client_for().get(URL, {"mob": "ops"}).content.decode()

    assert composition(page) == {"mob": "1", "operator": "1", "realm": "1"}
