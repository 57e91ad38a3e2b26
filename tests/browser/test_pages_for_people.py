"""Pages written for people, in Chromium at 1280 and 390 px (docs/daily-use.md §1, §5, §7, §8;
docs/timeline-live.md §7): titles, ids in their tooltips (a biography's successor too, under the caller's
visibility), no debug literal in the text, tables that say they scroll when (and only when) they
do, 40 px targets, and the same keys on every list page — over a freshly seeded demo."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from memory_panel.simulator.demo import DEFAULT_REALM
from memory_panel.simulator.store_writer import StoreWriter
from tests.support.postures import READER, REVIEWER
from tests.support.worlds import RETIRED_SUCCESSOR_TITLE, write_retired_successor

pytestmark = pytest.mark.browser

PAGES = {
    "timeline": "/console/timeline/",
    "dreams": "/console/memory/dreams/",
    "pipeline": "/console/memory/pipeline/",
    "holdings": "/console/memory/",
}
# The targets this issue measured too small, beside the daily-use set (tests/browser/test_daily_use_journeys.py).
TAP_TARGETS = ".tile a, .composition a, .timeline-event__raw summary, .queue-item__title, .order-switch a"
DEBUG_LITERALS = ("Agent {", "Steward {", "True", "False", "None")
SCROLL_HINT = "Scroll sideways for more columns →"


def _refused_socket(message: str) -> bool:
    # live_server speaks WSGI: the timeline's socket is refused there (tests/timeline drives it under daphne).
    return "/ws/console/timeline/" in message or message == "console error: [object Event]"


@pytest.fixture
def demo_browser(agent_memory_dir, user_with_password, browser_for):
    def open_demo(width: int):
        call_command("seed_demo")
        username = user_with_password("newcomer@example.test")
        browser = browser_for(width=width)
        browser.sign_in(username)
        return browser

    return open_demo


@pytest.mark.parametrize("width", [1280, 390])
def test_each_page_names_records_by_title_and_speaks_words(demo_browser, width):
    browser = demo_browser(width)
    page = browser.page

    for name, path in PAGES.items():
        browser.goto(path)
        page.wait_for_load_state("networkidle")
        browser.screenshot(f"people-{name}", full_page=False)
        named = page.evaluate("""() => Array.from(document.querySelectorAll('main a.record-ref'))
            .filter(a => a.offsetParent !== null)
            .map(a => [a.classList.contains('mono'), a.title, (a.nextElementSibling || {}).textContent || ''])""")
        assert named, f"{name} names no record"
        # docs/daily-use.md §7: the id is the link's tooltip, not a second line beside the title.
        assert all(not bare and title.startswith("mem-") and title not in after for bare, title, after in named), (
            name, named)
        text = page.locator("main").inner_text()
        assert not [literal for literal in DEBUG_LITERALS if literal in text.split()], name
        assert "Agent {" not in text, name
        if width == 390:
            small = page.evaluate("""selector => Array.from(document.querySelectorAll(selector))
                .filter(el => el.offsetParent !== null && el.getBoundingClientRect().height < 39.5)
                .map(el => el.textContent.trim().slice(0, 30))""", TAP_TARGETS)
            assert small == [], (name, small)
            hints = _scroll_hints(page)
            assert all((SCROLL_HINT in hint) == overflows for overflows, hint in hints), (name, hints)
    assert [m for m in browser.problems.messages if not _refused_socket(m)] == []


def _scroll_hints(page) -> list[tuple[bool, str]]:
    """(wider than its frame, the hint above it) for each table frame on screen."""
    return [tuple(pair) for pair in page.evaluate("""() => Array.from(document.querySelectorAll('main .table-wrap'))
        .filter(w => w.offsetParent !== null)
        .map(w => [w.scrollWidth > w.clientWidth + 1, getComputedStyle(w, '::before').content])""")]


def test_at_phone_width_only_a_table_wider_than_its_frame_says_it_scrolls(demo_browser):
    browser = demo_browser(390)
    page = browser.page

    browser.goto("/console/memory/ledger/")  # two columns of stores fit; the assertions' seven do not
    assert _scroll_hints(page) == [(False, "none"), (True, f'"{SCROLL_HINT}"')]
    broken = page.evaluate("""() => Array.from(document.querySelectorAll('.ledger-assertions td:first-child code'))
        .filter(code => code.getClientRects().length > 1).map(code => code.textContent)""")
    assert broken == [], "assertion ids broken over lines on a phone"
    browser.screenshot("people-table-hints")
    browser.goto("/console/memory/pipeline/")  # proposals and the review queue: wider than a phone
    assert _scroll_hints(page) == [(True, f'"{SCROLL_HINT}"')] * 2

    # The marks follow the window: these tables fit a desktop window and overflow again on the phone.
    marked = "count => document.querySelectorAll('main .table-wrap--overflows').length === count"
    page.set_viewport_size({"width": 1280, "height": 900})
    page.wait_for_function(marked, arg=0)
    page.set_viewport_size({"width": 390, "height": 900})
    page.wait_for_function(marked, arg=2)
    assert [m for m in browser.problems.messages if not _refused_socket(m)] == []


@pytest.fixture
def retired_successor(agent_memory_dir, demo_realms) -> tuple[str, str]:
    """The demo, plus a fact whose successor only reviewers may read (tests/support/worlds.py)."""
    writer = StoreWriter.open(DEFAULT_REALM, root=agent_memory_dir)
    try:
        return write_retired_successor(writer)
    finally:
        writer.close()


def test_a_biography_names_its_successor_by_title_only_for_a_caller_who_may_read_it(
    demo_realms, retired_successor, posture, user_with_password, browser_for
):
    posture("standard")
    reader, reviewer = user_with_password(READER), user_with_password(REVIEWER)
    prior, successor = retired_successor
    seat, seat_v2 = demo_realms.ids["seat"], demo_realms.ids["seat_v2"]

    browser = browser_for(width=390)
    browser.sign_in(reader, f"/console/memory/records/{seat}/?realm={DEFAULT_REALM}")
    page = browser.page
    successor_link = page.locator("#biography header p", has_text="Superseded by").locator("a.record-ref")
    assert successor_link.inner_text() == "Prefers aisle seats on short flights"
    assert successor_link.get_attribute("title") == seat_v2
    with page.expect_navigation():
        successor_link.click()
    assert page.locator("h1").inner_text() == "Prefers aisle seats on short flights"

    browser.goto(f"/console/memory/records/{prior}/?realm={DEFAULT_REALM}")  # its successor is reviewer-only
    successor_link = page.locator("#biography header p", has_text="Superseded by").locator("a.record-ref")
    assert successor_link.inner_text() == successor and "mono" in successor_link.get_attribute("class")
    assert RETIRED_SUCCESSOR_TITLE not in page.content()

    as_reviewer = browser_for(width=390)
    as_reviewer.sign_in(reviewer, f"/console/memory/records/{prior}/?realm={DEFAULT_REALM}")
    titled = as_reviewer.page.locator("#biography header p", has_text="Superseded by")
    assert titled.locator("a.record-ref").inner_text() == RETIRED_SUCCESSOR_TITLE
    assert titled.locator("a.record-ref").get_attribute("title") == successor
    browser.assert_clean()
    as_reviewer.assert_clean()


def test_the_seeded_timeline_reads_as_weeks_of_sentences_with_the_raw_event_one_click_away(demo_browser):
    browser = demo_browser(1280)
    page = browser.page
    browser.goto("/console/timeline/")

    events = page.locator("#timeline-events > li")
    assert events.count() >= 40
    oldest = events.last.locator(".timeline-event__time time").inner_text()
    assert oldest.endswith("d ago") and int(oldest.split()[0]) >= 14
    first = events.first
    raw = first.locator("details.timeline-event__raw")
    assert not raw.locator("dl").is_visible()
    raw.locator("summary").click()
    assert raw.locator("dl").is_visible() and "event_id" in raw.locator("dl").inner_text()
    assert first.locator(".timeline-event__exact").inner_text().endswith("UTC")


def test_the_same_keys_on_every_list_page(demo_browser):
    browser = demo_browser(1280)
    page = browser.page

    browser.goto("/console/memory/quarantine/")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.closest('.order-switch') !== null")

    browser.goto("/console/timeline/")
    ids = page.locator("#timeline-events > li").evaluate_all("items => items.map(i => i.id)")
    for _ in range(3):
        page.keyboard.press("j")
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.closest('li.timeline-event').id") == ids[1]
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    current = page.evaluate("document.activeElement.tagName")
    if current == "A":  # a record's link opens its biography
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "/console/memory/records/" in page.url
    else:  # a summary opens the raw event
        assert current == "SUMMARY"
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.closest('details').open")

    browser.goto("/console/memory/dreams/")
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY"
    browser.goto("/console/memory/pipeline/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.closest('tr.is-current') !== null")
    browser.goto("/console/memory/dreams/")
    page.keyboard.press("/")  # no filter form: the header's realm choice
    assert page.evaluate("document.activeElement.closest('form[data-realm-switch]') !== null")
    assert [m for m in browser.problems.messages if not _refused_socket(m)] == []
