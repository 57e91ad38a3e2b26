"""GET /console/memory/dreams/: one card per steward run, with its verdict sheet."""

from __future__ import annotations

from memory_panel.simulator.store_writer import ManualClock, StoreWriter, create_op, mob_scope, new_record
from tests.support.postures import SCOUT_READER
from tests.support.worlds import write_panel_realm

URL = "/console/memory/dreams/"


def test_card_shows_span_ops_touched_records_rationale_and_verdict_sheet(client_for, agent_memory_dir):
    realm = write_panel_realm(agent_memory_dir)
    page = client_for().get(URL).content.decode()
    card = page.split('<details class="dream-card" open>', 1)[1].split("</details>", 1)[0]

    assert realm.ids["dream_run"] in card
    assert "create ×1" in card
    assert f'href="/console/memory/records/{realm.ids["dream_created"]}/?realm=default"' in card
    assert "consolidated the ops gotchas" in card
    assert "Partition <code>realm</code>" in card and "proposals accepted 2" in card
    assert "Phases: consolidate 1 op" in card


def test_demo_runs_match_their_sheets_by_run_id(client_for, demo_realms):
    page = client_for().get(URL).content.decode()

    assert page.count('<details class="dream-card"') == 3
    assert "No verdict sheet" not in page
    first = page.split(demo_realms.ids["dream_1"], 1)[1].split("</details>", 1)[0]
    assert "proposals gated 1" in first and "quarantine gated 1" in first


def test_fifty_runs_render_as_collapsed_cards(client_for, agent_memory_dir):
    clock = ManualClock()
    with StoreWriter.create("default", root=agent_memory_dir, clock=clock) as writer:
        ops = mob_scope("default", "ops")
        for n in range(50):
            clock.advance(3_600_000)
            run = f"dream-{n:03d}"
            writer.steward_batch(run, [create_op(ops, new_record(kind="fact", title=f"Dreamt {n}", body=f"b{n}"))])
    page = client_for().get(URL, {"limit": "50"}).content.decode()

    assert page.count('<details class="dream-card"') == 50
    assert page.count('<details class="dream-card" open>') == 1
    assert page.index("dream-049") < page.index("dream-000")  # newest first
    assert "No verdict sheet for this run" in page


def test_no_runs_is_an_empty_state(client_for, agent_memory_dir):
    write_panel_realm(agent_memory_dir)  # has one run; a second realm has none
    page = client_for().get(URL, {"realm": "default"}).content.decode()
    assert page.count('<details class="dream-card"') == 1

    StoreWriter.create("quiet", root=agent_memory_dir).close()
    quiet = client_for().get(URL, {"realm": "quiet"}).content.decode()
    assert "No dream runs yet." in quiet


def test_without_realm_history_grant_dreams_say_no_grant(client_for, agent_memory_dir, posture):
    write_panel_realm(agent_memory_dir)
    posture("standard")
    page = client_for(SCOUT_READER).get(URL).content.decode()

    assert "No grant." in page and "dream-card" not in page
