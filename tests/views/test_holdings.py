"""GET /console/memory/: per-realm scope table, floor meters, no-grant rows, pipeline footer."""

from __future__ import annotations

import re


from tests.support.postures import NO_OPERATOR, READER, REVIEWER, SCOUT_READER
from tests.support.worlds import write_panel_realm

URL = "/console/memory/"


def scope_rows(page: str) -> list[str]:
    return re.findall(r'<th scope="row">(?:<a href="[^"]*">)?([^<]+)', page)


def test_scopes_ranked_identity_mob_operator_realm_with_counts(client_for, realm):
    page = client_for().get(URL).content.decode()

    assert scope_rows(page) == ["identity:ana", "identity:luka", "identity:mira",
                                "mob ops", "operator oncall", "realm"]
    luka = page.split("identity:luka</a>", 1)[1].split("</tr>", 1)[0]
    # active · quarantined · superseded · tombstoned: 23 facts + seat_v3; claimant; v1 and v2
    assert re.findall(r'<td class="num" data-label="\w+">(\d+)</td>', luka) == ["24", "1", "2", "0"]


def test_each_scope_links_to_records_filtered_to_it(client_for, realm):
    page = client_for().get(URL).content.decode()

    assert '<a href="/console/memory/records/?realm=default&amp;scope=mob&amp;scope_key=ops">mob ops</a>' in page
    assert '<a href="/console/memory/records/?realm=default&amp;scope=identity&amp;scope_key=identity%3Aluka">' in page


def test_floor_is_a_native_meter_without_inline_styles(client_for, realm):
    page = client_for().get(URL).content.decode()

    assert re.search(r'<meter class="floor" min="0" max="1" [^>]*value="0\.006"', page)  # 24 / 4000
    assert " style=" not in page


def test_unreadable_scope_kind_is_a_no_grant_row_not_a_zero(client_for, realm, posture):
    posture("standard")
    page = client_for(NO_OPERATOR).get(URL).content.decode()

    assert "operator oncall" not in page
    denied = page.split('<tr class="row-denied">', 1)[1].split("</tr>", 1)[0]
    assert '<th scope="row">operator</th>' in denied and "no grant" in denied


def test_caller_without_realm_history_sees_no_grant_for_the_whole_table(client_for, realm, posture):
    posture("standard")
    page = client_for(SCOUT_READER).get(URL).content.decode()

    assert "No grant." in page and "agent.memory.read" in page
    assert "<table" not in page


def test_footer_counts_for_a_reviewer(client_for, realm, posture):
    posture("standard")
    page = client_for(REVIEWER).get(URL).content.decode()
    footer = page.split('<footer class="holdings-footer"', 1)[1]

    assert realm.ids["dream_run"] in footer
    assert re.search(r"<dt>Quarantine queue</dt>\s*<dd><a href=\"/console/memory/quarantine/\">2</a>", footer)


def test_footer_hides_the_quarantine_count_from_a_reader(client_for, realm, posture):
    posture("standard")
    page = client_for(READER).get(URL).content.decode()
    footer = page.split('<footer class="holdings-footer"', 1)[1]

    assert "Quarantine queue" not in footer
    assert "reviewers only" in footer


def test_htmx_request_gets_the_holdings_block_alone(client_for, realm):
    fragment = client_for().get(URL, HTTP_HX_REQUEST="true").content.decode()

    assert fragment.lstrip().startswith('<section id="holdings"') and "<html" not in fragment


def test_realm_switcher_appears_with_several_realms(client_for, agent_memory_dir):
    write_panel_realm(agent_memory_dir, "default")
    write_panel_realm(agent_memory_dir, "team:blue")
    client = client_for()

    page = client.get(URL).content.decode()
    only_blue = client.get(URL, {"realm": "team:blue"}).content.decode()

    assert '<select id="realm-switch" name="realm">' in page
    assert "Realm <code>default</code>" in page and "Realm <code>team:blue</code>" in page
    assert "Realm <code>default</code>" not in only_blue and "Realm <code>team:blue</code>" in only_blue
    assert '<option value="team:blue" selected>' not in only_blue  # a link leaves the remembered choice alone


def test_a_realm_of_many_scopes_shows_those_that_matter_first_and_pages_the_rest(client_for, realm_writer, monkeypatch):
    from memory_panel.selectors import holdings as holdings_selectors
    from memory_panel.simulator.store_writer import agent, identity_scope

    monkeypatch.setattr(holdings_selectors, "SCOPES_SHOWN", 3)
    writer = realm_writer("default")
    for n, notes in enumerate([1, 5, 2, 1, 3]):
        for i in range(notes):
            writer.remember(identity_scope("default", f"identity:agent{n}"), f"Note {n}.{i}", f"body {n}.{i}")
    held = identity_scope("default", "identity:held")
    writer.remember(held, "Held", "held body", author=agent(held["identity"]),
                    gate_reason="session tainted by web tool 'web_fetch'")
    client = client_for()

    page = client.get(URL).content.decode()
    assert scope_rows(page) == ["identity:held", "identity:agent1", "identity:agent4"]  # quarantined, then largest
    assert "Showing 1–3 of 6 of 6 scopes" in page
    more = re.search(r'<a class="button" href="\?([^"]+)">Next 3 scopes</a>', page).group(1).replace("&amp;", "&")

    rest = client.get(f"{URL}?{more}").content.decode()
    assert scope_rows(rest) == ["identity:agent2", "identity:agent0", "identity:agent3"]
    assert "Next 3 scopes" not in rest

    found = client.get(URL, {"scopes": "agent3"}).content.decode()
    assert scope_rows(found) == ["identity:agent3"]
    assert "Showing 1–1 of 1 matching of 6 scopes" in found


def test_many_realms_share_one_table_of_the_scopes_that_matter_first(client_for, realm_writer, monkeypatch):
    from memory_panel.selectors import holdings as holdings_selectors
    from memory_panel.simulator.store_writer import identity_scope

    monkeypatch.setattr(holdings_selectors, "REALM_TABLES_MAX", 2)
    monkeypatch.setattr(holdings_selectors, "SCOPES_SHOWN", 3)
    for n, notes in enumerate([2, 4, 1, 3]):
        writer = realm_writer(f"realm{n}")
        for i in range(notes):
            writer.remember(identity_scope(f"realm{n}", "identity:scout"), f"Note {i}", f"body {i}")
    client = client_for()

    page = client.get(URL).content.decode()
    assert "<h2>Every realm</h2>" in page and "Realm <code>" not in page
    # the largest first, each row naming its realm and linking to that realm's records of the scope
    assert re.findall(r'<th scope="row"><code>([^<]+)</code>', page) == ["realm1", "realm3", "realm0"]
    assert '<a href="/console/memory/records/?realm=realm1&amp;scope=identity&amp;scope_key=identity%3Ascout">' in page
    assert "Showing 1–3 of 4 of 4 scopes" in page
    more = re.search(r'<a class="button" href="\?([^"]+)">Next 3 scopes</a>', page).group(1).replace("&amp;", "&")
    rest = client.get(f"{URL}?{more}").content.decode()
    assert re.findall(r'<th scope="row"><code>([^<]+)</code>', rest) == ["realm2"]
