"""Charts in Chromium (docs/charts.md §4): at 1280 and 390 px, light and dark, every page with
charts draws them without a script error or CSP violation, nothing wider than the window, no
serious axe violation, and the numbers open beside each chart."""

from __future__ import annotations

import pytest

from tests.support.axe import axe_violations
from tests.support.dated_realm import write_dated_realm
from tests.support.postures import REVIEWER

pytestmark = pytest.mark.browser

PAGES = {
    "realms": "/console/",
    "holdings": "/console/memory/?realm=dated",
    "quarantine": "/console/memory/quarantine/?realm=dated&days=90",
    "dreams": "/console/memory/dreams/?realm=dated",
}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_chart_pages_fit_and_read(realm_writer, posture, user_with_password, browser_for, width, scheme):
    write_dated_realm(realm_writer)
    posture("standard")
    username = user_with_password(REVIEWER)
    browser = browser_for(width=width, color_scheme=scheme)
    browser.sign_in(username)
    page = browser.page

    for name, path in PAGES.items():
        browser.goto(path)
        page.wait_for_load_state("networkidle")
        drawn = page.locator("main svg").count()
        assert drawn, f"{name} draws nothing"
        overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, (name, overflow)
        figures = page.locator("main figure.chart")
        if figures.count():
            first = figures.first
            first.locator("summary").click()
            assert first.locator("table tbody tr").count() > 0, name
            wide = page.evaluate("""() => Array.from(document.querySelectorAll('main figure.chart'))
                .filter(f => f.getBoundingClientRect().right > document.documentElement.clientWidth + 1).length""")
            assert wide == 0, name
        browser.screenshot(f"charts-{name}-{scheme}", full_page=True)
        assert axe_violations(page) == [], name
    browser.assert_clean()
