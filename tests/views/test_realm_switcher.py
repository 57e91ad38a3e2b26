"""docs/daily-use.md §3: the header's realm switcher lists a few realms and searches many."""

from __future__ import annotations

from pathlib import Path

from memory_panel.simulator.store_writer import StoreWriter
from memory_panel.views.realm_choice import LISTED_REALMS_MAX, SUGGESTED_REALMS
from tests.support.postures import NOBODY, READER

HOLDINGS = "/console/memory/"
OPTIONS = "/console/memory/realm/options/"


def write_realms(root: Path, names: list[str]) -> None:
    for name in names:
        StoreWriter.create(name, root=root).close()


def many_realm_names() -> list[str]:
    return [f"fleet-{n:03d}" for n in range(LISTED_REALMS_MAX + 5)]


def test_a_few_realms_are_listed_in_the_header(client_for, agent_memory_dir):
    write_realms(agent_memory_dir, ["default", "team:blue"])

    page = client_for().get(HOLDINGS).content.decode()

    assert '<select id="realm-switch" name="realm">' in page
    assert '<option value="team:blue">team:blue</option>' in page


def test_past_the_listed_number_the_header_is_a_search_field_not_every_name(client_for, agent_memory_dir):
    names = many_realm_names()
    write_realms(agent_memory_dir, names)

    page = client_for().get(HOLDINGS, {"realm": "fleet-007"}).content.decode()

    header = page.split("</header>", 1)[0]
    assert '<input type="search" id="realm-switch" name="realm"' in header
    assert f'placeholder="All {len(names)} realms"' in header
    assert "fleet-033" not in header  # no realm list in the header: its size does not grow with the realms


def test_the_search_field_suggests_matching_names_any_case_and_at_most_a_page(client_for, agent_memory_dir):
    names = many_realm_names()
    write_realms(agent_memory_dir, names)
    client = client_for()

    some = client.get(OPTIONS, {"realm": "FLEET-01"}).content.decode()
    every = client.get(OPTIONS, {"realm": ""}).content.decode()
    none = client.get(OPTIONS, {"realm": "nowhere"}).content.decode()

    assert some.count("<option") == 10 and '<option value="fleet-013"></option>' in some
    assert every.count("<option") == SUGGESTED_REALMS
    assert "<option" not in none


def test_suggested_names_are_escaped(client_for, agent_memory_dir):
    write_realms(agent_memory_dir, ['x"><b>bold</b>', "plain"])

    options = client_for().get(OPTIONS, {"realm": "x"}).content.decode()

    assert "<b>" not in options and "&quot;&gt;&lt;b&gt;bold&lt;/b&gt;" in options


def test_suggestions_need_a_memory_reader(client_for, agent_memory_dir, posture, client):
    write_realms(agent_memory_dir, ["default", "team:blue"])
    posture("standard")

    anonymous = client.get(OPTIONS, {"realm": "team"})
    denied = client_for(NOBODY).get(OPTIONS, {"realm": "team"})
    reader = client_for(READER).get(OPTIONS, {"realm": "team"})

    assert anonymous.status_code == 302 and "team:blue" not in anonymous.content.decode()
    assert denied.status_code == 403 and "team:blue" not in denied.content.decode()
    assert reader.status_code == 200 and '<option value="team:blue"></option>' in reader.content.decode()


def test_a_typed_name_switches_and_an_empty_one_is_all_realms(client_for, agent_memory_dir):
    names = many_realm_names()
    write_realms(agent_memory_dir, names)
    client = client_for()

    client.post("/console/memory/realm/", {"realm": "fleet-004", "next": HOLDINGS})
    chosen = client.get(HOLDINGS).content.decode().split("</header>", 1)[0]
    client.post("/console/memory/realm/", {"realm": "", "next": HOLDINGS})
    all_realms = client.get(HOLDINGS).content.decode().split("</header>", 1)[0]

    assert 'value="fleet-004"' in chosen
    assert 'value=""' in all_realms
