"""TAINT WALL says why it is red: one line on the tile, the story of each record on its page
(docs/panel-tiles.md §3.1), and that the demo's violation is the demo's (docs/demo.md §5)."""

from __future__ import annotations

import html
import re

from memory_panel.simulator.store_writer import agent, identity_scope
from tests.support.postures import READER, REVIEWER

HOLDINGS = "/console/memory/"
STORY = "/console/memory/holdings/taint-wall/"
LUKA = "identity:luka"
TAINT = "session tainted by web tool 'web_fetch'"


def text(page: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def tile_why(page: str) -> str:
    return text(page.split("data-tile-why>", 1)[1].split("</p>", 1)[0]).strip()


def built_on_a_quarantined_claim(realm_writer) -> str:
    w = realm_writer("default")
    held = w.remember(identity_scope("default", LUKA), "Cap is gone", "Per-diem cap lifted.", author=agent(LUKA),
                      gate_reason=TAINT)
    w.clock.advance(60_000)
    return w.remember(identity_scope("default", LUKA), "Cap summary", "Built on the quarantined claim.",
                      author=agent(LUKA), derived_from=[held])


def test_tile_says_in_one_line_which_record_breaks_the_wall_and_why(client_for, realm_writer, posture):
    built_on_a_quarantined_claim(realm_writer)
    posture("standard")

    why = tile_why(client_for(REVIEWER).get(HOLDINGS).content.decode())

    assert "“Cap summary” derives from a record still in quarantine, and its own write had no review" in why
    assert "demo" not in why


def test_story_names_the_quarantined_ancestor_its_gate_reason_and_the_unreviewed_write(
    client_for, realm_writer, posture
):
    summary = built_on_a_quarantined_claim(realm_writer)
    posture("standard")

    page = client_for(REVIEWER).get(STORY).content.decode()
    story = text(page.split(f'data-story="{summary}"', 1)[1].split("</article>", 1)[0])

    assert "Cap is gone , the record it derives from, was quarantined by the write gate" in story
    assert TAINT in story and "is still in quarantine" in story
    assert "Agent identity:luka wrote this record" in story and "the quarantine flag came along" in story
    assert "No review wrote this record" in story
    assert "part of the demo's story" not in page


def test_story_never_names_an_ancestor_the_reader_may_not_read(client_for, realm_writer, posture):
    built_on_a_quarantined_claim(realm_writer)
    posture("standard")  # a reader without memory.quarantine.review may not read the quarantined claim
    client = client_for(READER)

    page, holdings = client.get(STORY).content.decode(), client.get(HOLDINGS).content.decode()

    assert "Cap summary" in page and "a record you may not read" in page
    assert "Cap is gone" not in page and TAINT not in html.unescape(page)
    assert "derives from a record with a quarantine in its history" in tile_why(holdings)


def test_the_demos_violation_says_it_is_the_demos_and_tells_its_story(client_for, demo_realms):
    client = client_for()

    why = tile_why(client.get(HOLDINGS).content.decode())
    story = text(client.get(STORY).content.decode())

    assert why.startswith("Why: “Book Lisbon visitors near Marquês de Pombal” derives from a record released"
                          " from quarantine by an operator, and its own write had no review.")
    assert "Seeded by the demo on purpose" in why
    assert "This record is part of the demo's story" in story
    assert "Lisbon office moved to Avenida da Liberdade , the record it derives from, was quarantined" in story
    assert "an operator released it" in story
