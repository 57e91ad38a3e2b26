"""The timeline page when the server sends an event late, from its log, after a newer one (the
channel layer lost its publish: docs/timeline-live.md §4): the page counts it and shows it in its
place, as a reload would."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.servers import daphne_servers, deployment_with_reader, manage, post_events

CHROMIUM = Path("/usr/bin/chromium")
PASSWORD = "correct horse battery staple"

pytestmark = pytest.mark.browser


def _event(promoted: int) -> dict:
    return {"identity": "identity:luka", "event_type": "memory.harvest.completed", "timestamp_ms": 1_700_000_000_000,
            "data": {"realm": "default", "promoted": promoted, "tombstoned": 0}}


def test_an_event_sent_late_from_the_log_is_counted_and_shown_below_newer_ones(tmp_path: Path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium (/usr/bin/chromium) is not installed; the browser test needs it")
    from playwright.sync_api import expect, sync_playwright

    state = tmp_path / "state"
    env = deployment_with_reader(state, PASSWORD)
    token = env["MOBKIT_INGEST_TOKEN"]

    with daphne_servers(env, 1) as (server,), sync_playwright() as playwright:
        first = post_events(server, _event(1), token)["event_ids"][0]
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.goto(f"{server.http}/console/login/?next=/console/timeline/")
        page.fill("input[name=username]", "reader")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        expect(page.locator("#timeline-connection")).to_have_attribute("data-state", "live")
        expect(page.locator("#timeline-count")).to_have_text("1–1 of 1 event")

        # Stored with no publish (as while Redis is down): the server's sweep sends it a second or
        # so later, after the next event, which the channel layer brings at once.
        manage(env, "shell", "-c",
               "from mobkit_console.timeline.ingest import IncomingEvent; "
               "from mobkit_console.timeline.services import events_store; "
               "events_store(events=[IncomingEvent(None, 'identity:luka', 'memory.harvest.completed', "
               "1700000000000, {'realm': 'default', 'promoted': 2, 'tombstoned': 0}, None)])")
        newer = post_events(server, _event(3), token)["event_ids"][0]
        late = f"console-evt-{int(newer.removeprefix('console-evt-')) - 1}"

        rows = page.locator("#timeline-events > li")
        expect(rows).to_have_count(3)
        assert [rows.nth(n).get_attribute("id") for n in range(3)] == [newer, late, first]
        expect(page.locator("#timeline-count")).to_have_text("1–3 of 3 events")
        browser.close()
