"""Pages at a moment in Chromium (docs/history.md §4): at 1280 and 390 px, light and dark, the
header's As-of field takes a moment, every page says "as of" while it is set and keeps it on its
tabs, nothing is wider than the window, and axe finds nothing serious."""

from __future__ import annotations

import pytest

from tests.support.axe import axe_violations
from tests.support.history import write_script

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_the_realm_at_a_moment_reads_at_both_widths(agent_memory_dir, user_with_password, browser_for, width, scheme):
    script = write_script(agent_memory_dir)
    username = user_with_password("historian@example.test")
    browser = browser_for(width=width, color_scheme=scheme)
    browser.sign_in(username, "/console/memory/records/")
    page = browser.page

    # The moment after the supersede, as an operator would type it (seconds, UTC).
    page.get_by_label("As of (UTC)").fill(script.between("supersede")[:19])
    page.get_by_label("As of (UTC)").press("Enter")
    page.wait_for_url("**as_of=**")

    for tab in ("Records", "Holdings", "Knowledge"):
        page.get_by_role("navigation").get_by_role("link", name=tab, exact=True).click()
        page.wait_for_load_state("networkidle")
        assert "as_of=" in page.url, tab
        assert page.locator("#as-of-banner").is_visible(), tab
        overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        wide = page.evaluate("""() => Array.from(document.querySelectorAll('body *'))
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .slice(0, 8).map(e => e.tagName + '.' + e.className + '#' + e.id)""")
        assert overflow <= 0, (tab, overflow, wide)
        assert axe_violations(page) == [], tab
    browser.assert_clean()
