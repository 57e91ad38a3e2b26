"""User journeys through the Memory panel in Chromium: sign in, filter, load more, biography, Back."""

from __future__ import annotations

import json

import pytest

from tests.support.postures import READER, REVIEWER
from tests.support.worlds import LUKA_FACTS, write_panel_realm
from tests.support.worlds import PANEL_QUARANTINED_BODY as QUARANTINED_BODY
from tests.support.worlds import PANEL_QUARANTINED_TITLE as QUARANTINED_TITLE

pytestmark = pytest.mark.browser

PAGES = {
    "holdings": "/console/memory/",
    "records": "/console/memory/records/?limit=20",
    "quarantine": "/console/memory/quarantine/",
    "dreams": "/console/memory/dreams/",
}


def row_ids(page) -> list[str]:
    return page.locator("tr.record-row").evaluate_all("rows => rows.map(r => r.dataset.memoryId)")


def load_all(page) -> list[str]:
    """Press "Load more" until the list ends; returns the row ids in order."""
    for _ in range(30):  # guard: the journeys' lists need at most a handful of pages
        more = page.locator("#records-more a")
        if more.count() == 0:
            return row_ids(page)
        shown = page.locator("tr.record-row").count()
        more.click()
        page.wait_for_function("n => document.querySelectorAll('tr.record-row').length > n", arg=shown)
    pytest.fail("load more never reached the end")


def test_filter_load_more_biography_lineage_and_back(agent_memory_dir, user_with_password, browser_for):
    realm = write_panel_realm(agent_memory_dir)
    username = user_with_password("operator@example.test")
    browser = browser_for()
    page = browser.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])

    browser.sign_in(username, "/console/memory/records/?limit=5")
    assert page.url.endswith("/console/memory/records/?limit=5")

    page.get_by_label("Identity").fill("identity:luka")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**identity=identity%3Aluka**")
    page.wait_for_function("() => document.querySelectorAll('tr.record-row').length === 5")
    filtered_url = page.url
    browser.screenshot("records-filtered")

    ids = load_all(page)
    assert len(ids) == len(set(ids)) == LUKA_FACTS + 4
    assert page.get_by_text("End of the records.").is_visible()
    assert page.url == filtered_url  # loading more never rewrites the filter URL

    page.get_by_role("link", name="Prefers aisle seats", exact=True).click()
    assert page.locator("h1").inner_text() == "Prefers aisle seats"
    page.get_by_text("Record as JSON").click()
    page.get_by_role("button", name="Copy JSON").click()
    page.get_by_text("Copied.").wait_for()
    assert json.loads(page.evaluate("navigator.clipboard.readText()"))["id"] == realm.ids["seat_v2"]
    browser.screenshot("record-biography")

    lineage = page.locator("ol.lineage")
    lineage.get_by_role("link", name="Prefers window seats").click()
    assert page.locator("h1").inner_text() == "Prefers window seats"
    page.locator("ol.lineage").get_by_role("link", name="Prefers aisle, window on long-haul").click()
    assert page.locator("h1").inner_text() == "Prefers aisle, window on long-haul"

    for _ in range(3):
        page.go_back()
    page.wait_for_url(filtered_url)
    assert page.get_by_label("Identity").input_value() == "identity:luka"
    assert page.locator("tr.record-row").count() >= 5
    assert all(memory_id in ids for memory_id in row_ids(page))
    browser.assert_clean()


def test_keyboard_reaches_skip_link_filters_and_load_more(agent_memory_dir, user_with_password, browser_for):
    write_panel_realm(agent_memory_dir)
    username = user_with_password("keys@example.test")
    browser = browser_for()
    page = browser.page
    browser.sign_in(username, "/console/memory/records/?limit=5")

    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == "Load more":
            break
    else:
        pytest.fail("Tab never reached the Load more link")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('tr.record-row').length === 10")
    browser.assert_clean()


def test_reader_without_review_sees_no_quarantine_tab_and_no_quarantined_text(
    agent_memory_dir, user_with_password, browser_for, posture
):
    write_panel_realm(agent_memory_dir)
    posture("standard")
    username = user_with_password(READER)
    browser = browser_for()
    page = browser.page
    browser.sign_in(username)

    tabs = page.get_by_role("navigation", name="Console sections")
    assert tabs.get_by_role("link", name="Records").is_visible()
    assert tabs.get_by_role("link", name="Quarantine").count() == 0
    for path in ("/console/memory/", "/console/memory/records/?limit=200",
                 "/console/memory/records/?status=quarantined", "/console/memory/dreams/",
                 "/console/memory/quarantine/"):
        browser.goto(path)
        text = page.content()
        assert QUARANTINED_TITLE not in text and QUARANTINED_BODY not in text, path
    assert page.get_by_text("No grant.").is_visible()  # the quarantine page, reached by URL
    browser.assert_clean()


@pytest.mark.parametrize("width", [1280, 390])
def test_every_page_renders_cleanly_and_fits_the_width(agent_memory_dir, user_with_password, browser_for,
                                                       posture, width):
    realm = write_panel_realm(agent_memory_dir, hostile=True)
    write_panel_realm(agent_memory_dir, "team:blue")
    posture("standard")
    username = user_with_password(REVIEWER)
    browser = browser_for(width=width)
    page = browser.page
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    browser.sign_in(username)

    pages = {**PAGES, "biography": f"/console/memory/records/{realm.ids['seat_v1']}/?realm=default"}
    for name, path in pages.items():
        browser.goto(path)
        page.wait_for_load_state("networkidle")
        browser.screenshot(name)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{name} is {overflow}px wider than a {width}px viewport"
    assert dialogs == []  # the hostile <script>/onerror text never ran
    browser.assert_clean()
