"""Facets and saved views in Chromium: the facets load beside the list, a count adds its filter and
removes it again, a view is saved and opened, at desktop and phone widths with nothing wider than
the viewport and no CSP complaint."""

from __future__ import annotations

import pytest

from tests.support.worlds import write_panel_realm

pytestmark = pytest.mark.browser


def assert_no_overflow(page, width: int, name: str) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"{name} is {overflow}px wider than a {width}px viewport"


@pytest.mark.parametrize("width", [1280, 390])
def test_facets_filter_the_list_and_a_saved_view_opens_it_again(agent_memory_dir, user_with_password, browser_for,
                                                                width):
    write_panel_realm(agent_memory_dir)
    username = user_with_password("facets@example.test")
    browser = browser_for(width=width)
    page = browser.page
    browser.sign_in(username, "/console/memory/records/")

    facets = page.locator("aside.records-facets")
    facets.locator("#facet-status").wait_for()  # loaded after the list, by htmx
    active = facets.locator('a[data-facet="status"]', has_text="active")
    count = int(active.locator(".facet__count").inner_text())
    assert_no_overflow(page, width, "records with facets")
    browser.screenshot("records-facets")

    active.click()
    page.wait_for_url("**status=active**")
    chosen = page.locator('aside.records-facets a[data-facet="status"][aria-current="true"]')
    chosen.wait_for()
    assert page.locator("tr.record-row").count() == min(count, 50)

    page.get_by_label("Save this view as").fill("Active records")
    with page.expect_navigation():
        page.get_by_role("button", name="Save view").click()
    assert page.url.endswith("/console/views/")
    assert_no_overflow(page, width, "saved views")
    browser.screenshot("saved-views")
    with page.expect_navigation():
        page.get_by_role("link", name="Active records").click()
    assert "status=active" in page.url

    chosen = page.locator('aside.records-facets a[data-facet="status"][aria-current="true"]')
    chosen.wait_for()
    chosen.click()  # the chosen value's link removes the filter again
    page.wait_for_url(lambda url: "status=" not in url)
    page.locator('aside.records-facets a[data-facet="status"]').first.wait_for()
    assert page.locator('aside.records-facets a[aria-current="true"]').count() == 0
    browser.assert_clean()
