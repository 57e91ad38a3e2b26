"""Live by default, in Chromium against real daphne processes with default settings (no Redis, no
watch_realms): store writes reach the open timeline and the open quarantine queue without a
reload, the connection indicator tells the truth across a server restart, and "load older" walks
the timeline down to its first event."""

from __future__ import annotations

import re

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memory_panel.simulator.store_writer import StoreWriter, agent, batch, create_op, identity_scope, new_record, realm_scope
from tests.support.postures import READER, REVIEWER, STANDARD, write_access_toml

from tests.support.servers import daphne_servers, deployment_env, manage, post_events, start_daphne, stop_daphne, wait_following

CHROMIUM = Path("/usr/bin/chromium")
PASSWORD = "correct horse battery staple"
REALM = "default"
LUKA = "identity:luka"
ARGS = ["--no-sandbox", "--disable-gpu"]

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def _chromium() -> None:
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium (/usr/bin/chromium) is not installed; the browser test needs it")


def _deployment(tmp_path: Path, *subjects: str, posture: bool = False) -> tuple[dict[str, str], StoreWriter]:
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    writer = StoreWriter.create(REALM, root=state / "agent-memory")
    writer.remember(identity_scope(REALM, LUKA), "Prefers aisle seats", "Said so on the March trip.")
    extra = {"MOBKIT_ACCESS_CONFIG": str(write_access_toml(tmp_path / "config" / "access.toml", STANDARD))} \
        if posture else {}
    env = deployment_env(state, **extra)
    manage(env, "migrate", "--noinput")
    users = "; ".join(f"User.objects.create_user('{s.split('@')[0]}', email='{s}', password='{PASSWORD}')"
                      for s in subjects)
    manage(env, "shell", "-c", f"from django.contrib.auth import get_user_model; User = get_user_model(); {users}")
    return env, writer


def _quarantined_write(writer: StoreWriter, title: str) -> str:
    record = new_record(kind="fact", title=title, body=f"{title} (from a web page)")
    op = create_op(identity_scope(REALM, LUKA), record)
    return writer.apply_batch(batch(realm=REALM, author=agent(LUKA), ops=[op]),
                              gate_reason="session tainted by web tool 'web_search'").memory_ids[0]


@contextmanager
def _browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def _signed_in(browser, server, subject: str, path: str, problems: list[str]):
    page = browser.new_context().new_page()
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(f"{server.http}/console/login/?next={path}")
    page.fill("input[name=username]", subject.split("@")[0])
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"**{path}")
    return page


@contextmanager
def _open_for_reviewer_and_reader(tmp_path: Path, path: str) -> Iterator[tuple]:
    """One server under the standard posture, ``path`` open for a reviewer and for a reader, each
    page's event socket open (so before any write): yields (writer, server, reviewer, reader). No
    page may log a problem."""
    env, writer = _deployment(tmp_path, REVIEWER, READER, posture=True)
    problems: list[str] = []
    with daphne_servers(env, 1) as (server,), _browser() as browser:
        wait_following(env, REALM)
        pages = [_signed_in(browser, server, subject, path, problems) for subject in (REVIEWER, READER)]
        for page in pages:
            page.wait_for_selector("html[data-live-panels=live]", state="attached")
        yield writer, server, *pages
    writer.close()
    assert not problems, problems


def _expect_marked_new(row, text: str) -> None:
    from playwright.sync_api import expect

    expect(row).to_be_visible(timeout=5000)
    expect(row).to_have_class(re.compile(r"\blive-new\b"))
    expect(row).to_contain_text(text)


def _expect_unchanged(reader, section: str, before: str, text: str) -> None:
    reader.wait_for_timeout(1500)  # past the debounce and a refresh
    assert text not in reader.content()
    assert reader.locator(section).inner_text() == before


def test_a_store_write_appears_on_the_open_timeline_without_reload(tmp_path: Path):
    from playwright.sync_api import expect

    env, writer = _deployment(tmp_path, "admin@example.test")
    problems: list[str] = []
    with daphne_servers(env, 1) as (server,), _browser() as browser:
        wait_following(env, REALM)
        page = _signed_in(browser, server, "admin@example.test", "/console/timeline/", problems)
        expect(page.locator("#timeline-connection")).to_have_attribute("data-state", "live")
        expect(page.locator("#timeline-empty")).to_contain_text("No events yet")

        record_id = writer.remember(identity_scope(REALM, LUKA), "Window seat on long flights", "Asked twice.")

        item = page.locator("#timeline-events > li").first
        expect(item).to_have_attribute("data-event-type", "memory.record.remembered", timeout=5000)
        expect(item.locator("time")).to_have_text("just now")
        expect(item.get_by_role("link", name="Window seat on long flights")).to_have_attribute(
            "href", f"/console/memory/records/{record_id}/?realm={REALM}")
        expect(page.locator("#timeline-empty")).to_have_count(0)
    writer.close()
    assert not problems, problems


def test_a_quarantined_write_appears_in_the_open_queue_for_a_reviewer_and_never_for_a_reader(tmp_path: Path):
    from playwright.sync_api import expect

    with _open_for_reviewer_and_reader(tmp_path, "/console/memory/quarantine/") as (writer, _, reviewer, reader):
        expect(reviewer.get_by_text("The queue is empty.")).to_be_visible()
        reader_before = reader.locator("#quarantine").inner_text()

        memory_id = _quarantined_write(writer, "Flight moved to 9am")

        _expect_marked_new(reviewer.locator(f'#quarantine [data-live-key="{memory_id}"]'), "Flight moved to 9am")
        _expect_unchanged(reader, "#quarantine", reader_before, "Flight moved to 9am")


def test_connection_indicator_shows_offline_when_the_server_stops_and_live_after_it_restarts(tmp_path: Path):
    from playwright.sync_api import expect

    env, writer = _deployment(tmp_path, "admin@example.test")
    problems: list[str] = []
    server = start_daphne(env)
    try:
        with _browser() as browser:
            page = _signed_in(browser, server, "admin@example.test", "/console/timeline/", problems)
            indicator = page.locator("#timeline-connection")
            expect(indicator).to_have_attribute("data-state", "live")
            expect(page.locator("#timeline-connection-text")).to_have_text("Live")

            port = server.port
            stop_daphne(server)
            expect(indicator).to_have_attribute("data-state", "offline", timeout=30000)
            expect(page.locator("#timeline-connection-text")).to_contain_text("Offline")

            server = start_daphne(env, port)
            expect(indicator).to_have_attribute("data-state", "live", timeout=30000)
            wait_following(env, REALM)
            writer.remember(identity_scope(REALM, LUKA), "Back online", "After the restart.")
            expect(page.locator('#timeline-events > li[data-event-type="memory.record.remembered"]')).to_have_count(
                1, timeout=5000)
    finally:
        stop_daphne(server)
        writer.close()
    # The failed reconnection attempts log connection errors (Chromium's, and htmx's "[object Event]"
    # for each htmx:wsError); nothing else may.
    assert not [p for p in problems if "ERR_CONNECTION_REFUSED" not in p and p != "[object Event]"], problems


def test_load_older_reaches_the_first_event(tmp_path: Path):
    from playwright.sync_api import expect

    env, writer = _deployment(tmp_path, "admin@example.test")
    problems: list[str] = []
    total = 450  # newest page of 200, then two more
    with daphne_servers(env, 1) as (server,), _browser() as browser:
        ids = post_events(server, [{"identity": LUKA, "event_type": "memory.harvest.completed",
                                    "timestamp_ms": 1_700_000_000_000 + n,
                                    "data": {"realm": REALM, "promoted": n}} for n in range(total)],
                          env["MOBKIT_INGEST_TOKEN"])["event_ids"]
        page = _signed_in(browser, server, "admin@example.test", "/console/timeline/", problems)
        items = page.locator("#timeline-events > li")
        expect(items).to_have_count(200)
        for shown in (400, total):
            page.get_by_role("link", name="Load older events").click()
            expect(items).to_have_count(shown)
        expect(page.get_by_text("This is the first event the log holds.")).to_be_visible()
        expect(page.get_by_role("link", name="Load older events")).to_have_count(0)
        assert items.last.get_attribute("id") == ids[0]
        assert items.first.get_attribute("id") == ids[-1]
        assert page.url.endswith("/console/timeline/")  # loading older keeps the live page
        expect(page.locator("#timeline-connection")).to_have_attribute("data-state", "live")
    writer.close()
    assert not problems, problems


def test_a_quarantined_write_appears_on_the_open_pipeline_for_a_reviewer_and_never_for_a_reader(tmp_path: Path):
    from playwright.sync_api import expect

    with _open_for_reviewer_and_reader(tmp_path, "/console/memory/pipeline/") as (writer, server, reviewer, reader):
        quarantined = '#pipeline [data-stage="quarantined"] strong'
        expect(reviewer.locator(quarantined)).to_have_text("0")
        expect(reader.locator(quarantined)).to_have_text("no grant")
        reader_before = reader.locator("#pipeline").inner_text()
        scrolled = reviewer.evaluate("() => { window.scrollTo(0, 300); return window.scrollY; }")
        assert scrolled > 0  # the reader has scrolled down the page
        refetches: list[str] = []
        reviewer.on("request", lambda r: refetches.append(r.url) if r.headers.get("hx-request") else None)

        memory_id = _quarantined_write(writer, "Gate code is 4411")

        _expect_marked_new(reviewer.locator(f'#pipeline [data-live-key="{memory_id}"]'), "Gate code is 4411")
        expect(reviewer.locator(quarantined)).to_have_text("1")
        expect(reviewer.locator("#pipeline")).to_have_count(1)  # the fragment replaced the section, not nested in it
        assert reviewer.evaluate("window.scrollY") == scrolled
        _expect_unchanged(reader, "#pipeline", reader_before, "Gate code is 4411")
        # One event, one refetch of the page's own fragment (the queue inside it is not fetched apart).
        assert refetches == [f"{server.http}/console/memory/pipeline/"]


def test_a_dream_running_when_the_dreams_page_opens_shows_as_running_until_its_sheet_is_written(tmp_path: Path):
    from playwright.sync_api import expect

    env, writer = _deployment(tmp_path, "admin@example.test")
    run_id = writer.new_dream_run_id()
    started = writer.clock()
    writer.steward_batch(run_id, [create_op(realm_scope(REALM), new_record(kind="fact", title="Dreamt", body="b"))])
    problems: list[str] = []
    with daphne_servers(env, 1) as (server,), _browser() as browser:
        wait_following(env, REALM)  # the run started before: no event of its start will ever come
        page = _signed_in(browser, server, "admin@example.test", "/console/memory/dreams/", problems)
        running = page.locator("#dreams [data-live-running]")
        expect(running.locator(f'[data-run-id="{run_id}"]')).to_be_visible()
        page.wait_for_selector("html[data-live-panels=live]", state="attached")

        writer.record_dream_run(run_id, started_at_ms=started, ops_committed=1)

        expect(running.locator("[data-run-id]")).to_have_count(0, timeout=5000)
        expect(running).to_be_hidden()
        expect(page.locator("#dreams .dream-card").first).to_contain_text("ops committed")
    writer.close()
    assert not problems, problems
