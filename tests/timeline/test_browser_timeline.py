"""The timeline page in Chromium against a real daphne (live_server speaks no WebSocket): an event
ingested after the page loaded appears without a reload and joins the count, and its link opens the record."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_panel.simulator.store_writer import StoreWriter, identity_scope

from tests.support.servers import daphne_servers, deployment_with_reader, manage, post_events, start_daphne, stop_daphne

CHROMIUM = Path("/usr/bin/chromium")
PASSWORD = "correct horse battery staple"

pytestmark = pytest.mark.browser


def _event(event_type: str, **data):
    return {"identity": "identity:luka", "event_type": event_type, "timestamp_ms": 1_700_000_000_000,
            "data": {"realm": "default", **data}}


def test_timeline_shows_live_event_without_reload_and_links_to_the_record(tmp_path: Path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium (/usr/bin/chromium) is not installed; the browser test needs it")
    from playwright.sync_api import expect, sync_playwright

    state = tmp_path / "state"
    with StoreWriter.create("default", root=state / "agent-memory") as writer:
        record_id = writer.remember(identity_scope("default", "identity:luka"), "Prefers aisle seats",
                                    "Said so on the March trip.")
    env = deployment_with_reader(state, PASSWORD)
    token = env["MOBKIT_INGEST_TOKEN"]
    problems: list[str] = []

    with daphne_servers(env, 1) as (server,), sync_playwright() as playwright:
        # Enough history that the reader can scroll away from the newest event.
        post_events(server, [_event("memory.harvest.completed", identity="identity:luka", promoted=n, tombstoned=0)
                             for n in range(40)], token)
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1200, "height": 700})
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(f"{server.http}/console/login/?next=/console/timeline/")
        page.fill("input[name=username]", "reader")
        page.fill("input[name=password]", PASSWORD)
        with page.expect_websocket(lambda ws: "/ws/console/timeline/" in ws.url) as socket_info:
            page.click("button[type=submit]")
        socket = socket_info.value
        expect(page.locator("#timeline-events > li")).to_have_count(40)
        expect(page.locator("#timeline-count")).to_have_text("1–40 of 40 events")

        # Scrolled down: a new event is held back behind "1 new — jump to live".
        page.mouse.wheel(0, 3000)
        page.wait_for_function("document.getElementById('timeline-events').getBoundingClientRect().top < 0")
        with socket.expect_event("framereceived"):
            held = post_events(server, _event("memory.budget.denied", stage="dream", reason="budget denied: tokens"),
                               token)["event_ids"][0]
        expect(page.locator("#timeline-jump")).to_be_visible()
        expect(page.locator("#timeline-jump-count")).to_have_text("1")
        expect(page.locator("#timeline-count")).to_have_text("1–41 of 41 events")  # counted, though held
        expect(page.locator(f'[id="{held}"]')).to_be_hidden()
        page.click("#timeline-jump")
        expect(page.locator(f'[id="{held}"]')).to_be_visible()
        expect(page.locator(f'[id="{held}"]')).to_have_class("timeline-event timeline-event--warning")
        expect(page.locator("#timeline-jump")).to_be_hidden()

        # At the top: the next event shows at once, and its link opens the record's biography.
        live = post_events(server, _event("memory.record.remembered", record_id=record_id,
                                          scope_kind="identity", scope_key="identity:luka"), token)["event_ids"][0]
        item = page.locator(f'[id="{live}"]')
        expect(item).to_be_visible(timeout=5000)
        expect(page.locator("#timeline-events > li").first).to_have_id(live)
        expect(page.locator("#timeline-count")).to_have_text("1–42 of 42 events")
        # Several events in one frame each count once.
        post_events(server, [_event("memory.harvest.completed", promoted=n, tombstoned=0) for n in range(3)], token)
        expect(page.locator("#timeline-count")).to_have_text("1–45 of 45 events")
        expect(page.locator("#timeline-events > li")).to_have_count(45)
        item.get_by_role("link", name="Prefers aisle seats").click()
        page.wait_for_url(f"**/console/memory/records/{record_id}/?realm=default")
        expect(page.get_by_text("Prefers aisle seats").first).to_be_visible()
        browser.close()

    assert not [p for p in problems if "Content Security Policy" in p or "Refused" in p], problems


def test_timeline_catches_up_after_the_server_restarts(tmp_path: Path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium (/usr/bin/chromium) is not installed; the browser test needs it")
    from playwright.sync_api import expect, sync_playwright

    state = tmp_path / "state"
    env = deployment_with_reader(state, PASSWORD)
    token = env["MOBKIT_INGEST_TOKEN"]
    server = start_daphne(env)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                 args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            sockets: list[str] = []
            page.on("websocket", lambda ws: sockets.append(ws.url))
            page.goto(f"{server.http}/console/login/?next=/console/timeline/")
            page.fill("input[name=username]", "reader")
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            shown = post_events(server, _event("memory.harvest.completed", promoted=1), token)["event_ids"][0]
            expect(page.locator(f'[id="{shown}"]')).to_be_visible(timeout=5000)

            # The server goes away; an event is stored while no server runs, then it comes back.
            port = server.port
            stop_daphne(server)
            manage(env, "shell", "-c",
                   "from mobkit_console.timeline.ingest import IncomingEvent; "
                   "from mobkit_console.timeline.services import events_store; "
                   "events_store(events=[IncomingEvent(None, 'identity:luka', 'memory.harvest.completed', "
                   "1700000000000, {'realm': 'default', 'promoted': 2}, None)])")
            server = start_daphne(env, port)

            missed = f"console-evt-{int(shown.removeprefix('console-evt-')) + 1}"
            expect(page.locator(f'[id="{missed}"]')).to_be_visible(timeout=15000)
            expect(page.locator("#timeline-events > li")).to_have_count(2)
            assert any(f"after={shown}" in url for url in sockets[1:]), sockets
            browser.close()
    finally:
        stop_daphne(server)
