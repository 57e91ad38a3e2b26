"""Pipeline embeds the quarantine queue as one of its sections: one h1, no second banner, space above."""

from __future__ import annotations

from tests.support.postures import REVIEWER


def test_pipeline_embeds_the_queue_as_a_section_without_a_second_banner(client_for, realm, posture):
    posture("standard")
    page = client_for(REVIEWER).get("/console/memory/pipeline/").content.decode()
    main = page.split('<main id="main"', 1)[1]

    assert main.count("<h1") == 1 and '<h2 id="quarantine-heading">Quarantine</h2>' in main
    assert 'class="read-only-note"' not in main
    assert '<div class="pipeline-queue">' in main


def test_quarantine_page_keeps_its_heading_and_banner(client_for, realm, posture):
    posture("standard")
    page = client_for(REVIEWER).get("/console/memory/quarantine/").content.decode()

    assert '<h1 id="quarantine-heading">Quarantine</h1>' in page and 'class="read-only-note"' in page
