"""GET /console/memory/quarantine/ and what a reader without review never receives."""

from __future__ import annotations

import re


from tests.support.postures import READER, REVIEWER
from tests.support.worlds import PANEL_QUARANTINED_BODY, PANEL_QUARANTINED_TITLE

URL = "/console/memory/quarantine/"


def test_reviewer_sees_the_queue_with_reason_scope_and_lineage(client_for, realm, posture):
    posture("standard")
    page = client_for(REVIEWER).get(URL).content.decode()

    assert PANEL_QUARANTINED_TITLE in page
    assert "session tainted by MCP server &#x27;scraper&#x27;" in page
    assert "identity:mira" in page
    assert f'claims to supersede <a class="record-ref" href="/console/memory/records/{realm.ids["seat_v3"]}/?realm=default" title="{realm.ids["seat_v3"]}" data-memory-id="{realm.ids["seat_v3"]}">Prefers aisle, window on long-haul</a>' in page
    assert PANEL_QUARANTINED_BODY in page  # a reviewer reads the first lines inline (docs/daily-use.md §6)


def test_page_is_read_only_and_says_where_verdicts_are_made(client_for, realm):
    page = client_for().get(URL).content.decode()

    assert "mobkit/gating/decide" in page
    main = page.split('<main id="main"', 1)[1]
    # The one form saves the page as a link in the console's own database (docs/saved-views.md §1).
    assert main.count("<form") == main.count('<form class="save-view" method="post" action="/console/views/save"') == 1
    assert main.count("<button") == main.count(">Save view</button>") == 1


def test_pending_gated_promotions_show_rationale_target_and_age(client_for, agent_memory_dir, demo_realms):
    page = client_for().get(URL).content.decode()
    promotions = page.split("Pending gated promotions", 1)[1]

    assert "the whole mob books this venue" in promotions
    assert "mob ops" in promotions
    assert "<time datetime=" in promotions


def test_reader_without_review_gets_no_grant_and_no_tab(client_for, realm, posture):
    posture("standard")
    page = client_for(READER).get(URL).content.decode()

    assert "No grant." in page and "memory.quarantine.review" in page
    assert PANEL_QUARANTINED_TITLE not in page
    assert 'href="/console/memory/quarantine/"' not in page


def test_no_quarantined_text_in_any_page_a_reader_without_review_receives(client_for, realm, posture):
    posture("standard")
    client = client_for(READER)
    records = client.get("/console/memory/records/", {"limit": "200"}).content.decode()
    urls = [
        "/console/memory/",
        "/console/memory/records/?limit=200",
        "/console/memory/records/?status=quarantined",
        "/console/memory/records/?identity=identity:mira",
        "/console/memory/quarantine/",
        "/console/memory/dreams/",
        f"/console/memory/records/{realm.ids['quarantined']}/",
        f"/console/memory/records/{realm.ids['claimant']}/",
        *sorted(set(re.findall(r'href="(/console/memory/records/mem-[^"]+)"', records))),
    ]
    for url in urls:
        page = client.get(url.replace("&amp;", "&")).content.decode()
        assert PANEL_QUARANTINED_BODY not in page, url
        assert PANEL_QUARANTINED_TITLE not in page, url
        assert "Exit row, always." not in page and "Prefers the exit row" not in page, url
