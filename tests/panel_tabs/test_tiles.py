"""Each Holdings verdict tile over store-writer realms built to hold, degrade and violate it.

The same table runs over the direct read of a small realm and over the console's realm index
(``MOBKIT_REALM_INDEX_MIN_ROWS=0``), so both paths decide every tile the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from memory_panel.simulator.store_writer import (
    StoreWriter,
    agent,
    create_op,
    evidence_ref,
    identity_scope,
    mob_scope,
    new_record,
)
from tests.support.postures import NOBODY, READER, REVIEWER, ROOT as ADMIN, SCOUT_READER as SCOPED

URL = "/console/memory/"
DAY = 86_400_000
LUKA = "identity:luka"
SESSION = "sess-luka-7"


def _base(w: StoreWriter) -> dict[str, str]:
    """What every realm holds: clean records in two identities and a mob, one useful injection."""
    ids = {}
    luka = identity_scope(w.realm, LUKA)
    ids["fact"] = w.remember(luka, "Luka flies from Lisbon", "Home airport is LIS.",
                             author=agent(LUKA), evidence=[evidence_ref(SESSION, 1)])
    ids["ana"] = w.remember(identity_scope(w.realm, "identity:ana"), "Ana prefers tea", "Green tea.")
    ids["mob"] = w.remember(mob_scope(w.realm, "ops"), "Deploys on Tuesday", "Never on Friday.", kind="gotcha")
    w.record_injection(ids["mob"], LUKA, session_key=SESSION)
    w.mark_usage(ids["mob"], "judged_useful")
    return ids


def _hand_edit(w: StoreWriter, sql: str, *args) -> None:
    # A violation MobKit's own validator refuses can still reach a file (a hand edit, a bug).
    w.conn.execute(sql, args)
    w.conn.commit()


# --- ECHO-SAFETY ---------------------------------------------------------------------------------
def echo_holding(w, ids):
    pass  # luka's record cites SESSION, but the text injected there was another record's


def _echo(w, ids, gate_reason=None):
    # The mob gotcha was injected into SESSION; luka then writes the very same text, citing SESSION.
    return w.remember(identity_scope(w.realm, LUKA), "Deploys on Tuesday", "Never on Friday.",
                      author=agent(LUKA), evidence=[evidence_ref(SESSION, 2)], gate_reason=gate_reason)


def echo_degraded(w, ids):
    _echo(w, ids, gate_reason="session tainted by web tool 'web_fetch'")


def echo_violated(w, ids):
    return _echo(w, ids)


# --- TAINT WALL -----------------------------------------------------------------------------------
def taint_holding(w, ids):
    held = w.remember(identity_scope(w.realm, LUKA), "Cap is gone", "Per-diem cap lifted.", author=agent(LUKA),
                      gate_reason="session tainted by web tool 'web_fetch'")
    w.review_quarantine(held, "release", reviewer={"kind": "operator", "principal": "root"})


def taint_degraded(w, ids):
    w.propose(mob_scope(w.realm, "ops"), new_record(kind="fact", title="Forum tip", body="Use the side door."),
              author=agent(LUKA), taint="session tainted by web tool 'web_fetch'")
    w.clock.advance(8 * DAY)
    w.remember(identity_scope(w.realm, "identity:ana"), "Later note", "Eight days on.")  # the realm's clock moves


def taint_violated(w, ids):
    proposal = w.propose(mob_scope(w.realm, "ops"), new_record(kind="fact", title="Forum tip", body="Side door."),
                         author=agent(LUKA), taint="session tainted by web tool 'web_fetch'")
    w.accept_proposal(proposal, run_id="dream-1", rationale="looks fine")  # no gate: the wall is breached
    held = w.remember(identity_scope(w.realm, LUKA), "Cap is gone", "Per-diem cap lifted.", author=agent(LUKA),
                      gate_reason="session tainted by web tool 'web_fetch'")
    return w.remember(identity_scope(w.realm, LUKA), "Cap summary", "Built on the quarantined claim.",
                      derived_from=[held])


# --- LATTICE --------------------------------------------------------------------------------------
def lattice_holding(w, ids):
    pass


def lattice_degraded(w, ids):
    _hand_edit(w, "UPDATE records SET supersedes = 'gone-forever' WHERE memory_id = ?", ids["ana"])


def lattice_violated(w, ids):
    _hand_edit(w, "UPDATE records SET trust = 'operator' WHERE memory_id = ?", ids["fact"])
    return ids["fact"]


# --- RECALL ---------------------------------------------------------------------------------------
def recall_holding(w, ids):
    pass


def recall_degraded(w, ids):
    for _ in range(3):
        w.record_injection(ids["ana"], "identity:ana", session_key="sess-ana")


def recall_violated(w, ids):
    held = w.remember(identity_scope(w.realm, LUKA), "Tainted claim", "From the forum.", author=agent(LUKA),
                      gate_reason="session tainted by web tool 'web_fetch'")
    w.record_injection(held, LUKA, session_key=SESSION)
    return held


# --- DREAMS ---------------------------------------------------------------------------------------
def dreams_unverifiable(w, ids):
    pass


def dreams_holding(w, ids):
    run = w.new_dream_run_id()
    w.record_dream_run(run, started_at_ms=w.clock(), ops_committed=0, phases=[("orient", "1 scopes")],
                       verdicts={"proposals_accepted": 0})


def dreams_degraded(w, ids):
    run = w.new_dream_run_id()
    w.record_dream_run(run, started_at_ms=w.clock(), ops_committed=0, verdicts={"quarantine_release_blocked": 1})


def dreams_violated(w, ids):
    proposal = w.propose(mob_scope(w.realm, "ops"), new_record(kind="fact", title="Gate me", body="Please."),
                         author=agent(LUKA))
    w.stage_gated_promotion(proposal, mob_scope(w.realm, "ops"), run_id="dream-0", rationale="tainted")
    w.clock.advance(8 * DAY)
    dreams_holding(w, ids)  # a dream ran after the expiry and left the promotion pending


# --- STORE FLOOR ----------------------------------------------------------------------------------
def _fill(w: StoreWriter, count: int) -> None:
    scope = identity_scope(w.realm, "identity:ana")
    w.bulk_apply((create_op(scope, new_record(kind="fact", title=f"Filler {n}", body=f"Body {n}."))
                  for n in range(count)), author={"author": "application"})


def floor_holding(w, ids):
    pass


def floor_degraded(w, ids):
    _fill(w, 3600 - 1)  # ana already holds one: 3,600 active is 90% of the 4,000 floor


def floor_violated(w, ids):
    _fill(w, 4000 - 1)


TABLE: list[tuple[str, Callable, str]] = [
    ("echo-safety", echo_holding, "holding"),
    ("echo-safety", echo_degraded, "degraded"),
    ("echo-safety", echo_violated, "violated"),
    ("taint-wall", taint_holding, "holding"),
    ("taint-wall", taint_degraded, "degraded"),
    ("taint-wall", taint_violated, "violated"),
    ("lattice", lattice_holding, "holding"),
    ("lattice", lattice_degraded, "degraded"),
    ("lattice", lattice_violated, "violated"),
    ("recall", recall_holding, "holding"),
    ("recall", recall_degraded, "degraded"),
    ("recall", recall_violated, "violated"),
    ("dreams", dreams_unverifiable, "unverifiable"),
    ("dreams", dreams_holding, "holding"),
    ("dreams", dreams_degraded, "degraded"),
    ("dreams", dreams_violated, "violated"),
    ("store-floor", floor_holding, "holding"),
    ("store-floor", floor_degraded, "degraded"),
    ("store-floor", floor_violated, "violated"),
]


def tile_states(page: str) -> dict[str, str]:
    return dict(re.findall(r'data-tile="([a-z-]+)" data-status="([a-z-]+)"', page))


def build(realm_writer, scenario: Callable) -> tuple[dict[str, str], str | None]:
    w = realm_writer("default")
    ids = _base(w)
    w.clock.advance(60_000)
    return ids, scenario(w, ids)


@pytest.mark.parametrize(("tile", "scenario", "state"), TABLE, ids=[f"{t}-{s}" for t, _, s in TABLE])
def test_tile_state_follows_its_rule_over_every_row(client_for, realm_writer, read_path, tile, scenario, state):
    build(realm_writer, scenario)
    client = client_for()
    client.get(URL)  # the first request builds the index when the realm gets one

    assert tile_states(client.get(URL).content.decode())[tile] == state


@pytest.mark.parametrize(
    ("tile", "scenario"),
    [("echo-safety", echo_violated), ("lattice", lattice_violated), ("recall", recall_violated),
     ("taint-wall", taint_violated)],
)
def test_violated_tile_links_its_offending_record_and_the_list_of_all(client_for, realm_writer, read_path,
                                                                       tile, scenario):
    _, offender = build(realm_writer, scenario)
    client = client_for()
    client.get(URL)
    strip = client.get(URL).content.decode().split(f'data-tile="{tile}"', 1)[1].split("</li>\n    \n", 1)[0]

    assert f"/console/memory/records/{offender}/?realm=default" in strip
    assert f'href="/console/memory/holdings/{tile}/"' in strip
    evidence = client.get(f"/console/memory/holdings/{tile}/").content.decode()
    assert f"/console/memory/records/{offender}/?realm=default" in evidence


def test_every_tile_says_no_grant_to_a_reader_without_any_memory_grant(client_for, realm_writer, posture):
    build(realm_writer, lattice_violated)
    posture("standard")

    assert set(tile_states(client_for(NOBODY).get(URL).content.decode()).values()) == {"no-grant"}


def test_scoped_reader_tiles_count_only_its_scopes(client_for, realm_writer, posture, read_path):
    # ana's dangling supersede degrades LATTICE for the admin; the scout reads luka alone.
    build(realm_writer, lattice_degraded)
    posture("standard")
    client_for(ADMIN).get(URL)
    admin = client_for(ADMIN).get(URL).content.decode()
    scout = client_for(SCOPED).get(URL).content.decode()

    assert tile_states(admin)["lattice"] == "degraded"
    assert tile_states(scout)["lattice"] == "holding"
    assert tile_states(scout)["dreams"] == "no-grant"  # dream history needs an unscoped grant
    assert "checked 1 of 1 readable records" in scout.split('data-tile="lattice"', 1)[1]


def test_reader_without_review_never_counts_quarantined_rows(client_for, realm_writer, posture):
    build(realm_writer, recall_violated)
    posture("standard")

    assert tile_states(client_for(REVIEWER).get(URL).content.decode())["recall"] == "violated"
    assert tile_states(client_for(READER).get(URL).content.decode())["recall"] == "holding"


def test_unknown_tile_is_a_clear_404(client_for, realm_writer):
    build(realm_writer, lattice_holding)

    response = client_for().get("/console/memory/holdings/nope/")
    assert response.status_code == 404
    assert "unknown verdict tile &#x27;nope&#x27;" in response.content.decode()


def test_older_store_format_decides_the_record_tiles_and_leaves_dreams_unverifiable(client_for, realm_writer,
                                                                                    read_path):
    w = realm_writer("default", format="older")
    ids = _base(w)
    lattice_violated(w, ids)
    client = client_for()
    client.get(URL)
    states = tile_states(client.get(URL).content.decode())

    assert states["lattice"] == "violated"
    assert states["dreams"] == "unverifiable"  # the older format keeps no dream_runs sheets
    assert states["taint-wall"] == "holding"


def test_a_reader_without_review_is_told_it_checked_only_rows_it_may_read(client_for, realm_writer, posture, read_path):
    """Retired quarantine evidence (tombstoned after review) is reviewer-only: not among a reader's "checked"."""
    def retired_evidence(w, ids):
        held = w.remember(identity_scope(w.realm, LUKA), "Scraped", "wire the funds", author=agent(LUKA),
                          gate_reason="tainted")
        w.review_quarantine(held, "tombstone", reviewer={"kind": "operator", "principal": "root"})

    build(realm_writer, retired_evidence)
    posture("standard")
    reader = client_for(READER).get(URL).content.decode().split('data-tile="lattice"', 1)[1]
    reviewer = client_for(REVIEWER).get(URL).content.decode().split('data-tile="lattice"', 1)[1]
    assert "checked 3 of 3 readable records" in reader  # _base: luka's, ana's and the mob's
    assert "checked 4 of 4 readable records" in reviewer
