"""Pages written for people, in Chromium at 1280 and 390 px (docs/daily-use.md §1, §5, §7, §8;
docs/timeline-live.md §7): titles beside ids, no debug literal in the text, tables that say they
scroll, 40 px targets, and the same keys on every list page — over a freshly seeded demo."""

from __future__ import annotations

import pytest
from django.core.management import call_command

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
            .map(a => [a.classList.contains('mono'), (a.nextElementSibling || {}).className || ''])""")
        assert named, f"{name} names no record"
        assert all(not bare and "record-ref__id" in sibling for bare, sibling in named), (name, named)
        text = page.locator("main").inner_text()
        assert not [literal for literal in DEBUG_LITERALS if literal in text.split()], name
        assert "Agent {" not in text, name
        if width == 390:
            small = page.evaluate("""selector => Array.from(document.querySelectorAll(selector))
                .filter(el => el.offsetParent !== null && el.getBoundingClientRect().height < 39.5)
                .map(el => el.textContent.trim().slice(0, 30))""", TAP_TARGETS)
            assert small == [], (name, small)
            hints = page.evaluate("""() => Array.from(document.querySelectorAll('main .table-wrap'))
                .filter(w => w.offsetParent !== null && w.scrollWidth > w.clientWidth + 1)
                .map(w => getComputedStyle(w, '::before').content)""")
            assert all("Scroll sideways" in hint for hint in hints), (name, hints)
    assert [m for m in browser.problems.messages if not _refused_socket(m)] == []


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
    page.keyboard.press("Enter")  # a record's link opens its biography; a summary opens the raw event
    page.wait_for_load_state()

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
