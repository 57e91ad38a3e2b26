"""Search journey in Chromium: search → a result → its biography → a diff step → Back to the same results."""

from __future__ import annotations

import pytest

from tests.support.worlds import LUKA_FACTS, write_panel_realm

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_search_result_biography_diff_and_back(agent_memory_dir, user_with_password, browser_for, width):
    realm = write_panel_realm(agent_memory_dir)
    username = user_with_password("searcher@example.test")
    browser = browser_for(width=width)
    page = browser.page
    browser.sign_in(username, "/console/memory/records/?limit=5")

    page.get_by_label("Search").fill('seats "aisle"')
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**q=seats**")
    results_url = page.url
    page.locator("tr.record-row mark").first.wait_for()
    assert page.locator("tr.record-row").count() == 1  # only the active version says "aisle" and "seats"
    assert page.locator(".records-count").inner_text().startswith("1–1 of 1")
    browser.screenshot("search-results")

    page.locator("tr.record-row a").first.click()
    assert page.locator("h1").inner_text() == "Prefers aisle seats"
    page.locator("ol.lineage a.lineage__diff").first.click()
    page.wait_for_url(f"**diff={realm.ids['seat_v2']}**")
    diff = page.locator("#diff")
    assert diff.locator("del").first.inner_text().strip() != ""
    assert "aisle" in diff.locator("ins").all_inner_texts()[0].casefold()
    browser.screenshot("version-diff")

    page.go_back()
    page.go_back()
    page.wait_for_url(results_url)
    assert page.get_by_label("Search").input_value() == 'seats "aisle"'
    assert page.locator("tr.record-row").count() == 1
    browser.assert_clean()


def test_search_load_more_reaches_every_match_once(agent_memory_dir, user_with_password, browser_for):
    write_panel_realm(agent_memory_dir)
    username = user_with_password("searcher2@example.test")
    browser = browser_for()
    page = browser.page
    browser.sign_in(username, "/console/memory/records/?limit=5&q=luka")
    for _ in range(10):
        more = page.locator("#records-more a")
        if more.count() == 0:
            break
        shown = page.locator("tr.record-row").count()
        more.click()
        page.wait_for_function("n => document.querySelectorAll('tr.record-row').length > n", arg=shown)
    ids = page.locator("tr.record-row").evaluate_all("rows => rows.map(r => r.dataset.memoryId)")
    assert len(ids) == len(set(ids)) == LUKA_FACTS
    browser.assert_clean()
