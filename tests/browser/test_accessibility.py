"""Every console page passes axe-core with no serious or critical violation, at 1280 and 390 px, as
an admin over the seeded demo (docs/daily-use.md §1, §5); and the small things axe cannot measure."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.support.axe import axe_violations
from tests.support.postures import ROOT

pytestmark = pytest.mark.browser

PAGES = {
    "holdings": "/console/memory/",
    "records": "/console/memory/records/",
    "quarantine": "/console/memory/quarantine/",
    "dreams": "/console/memory/dreams/",
    "knowledge": "/console/memory/knowledge/?identity=identity:ana",
    "pipeline": "/console/memory/pipeline/",
    "ledger": "/console/memory/ledger/",
    "recall": "/console/memory/recall/?identity=identity:luka&query_text=hotel",
    "search": "/console/memory/records/?q=travel",
    "timeline": "/console/timeline/",
    "audit": "/console/audit/",
    "access": "/console/access/?subject=reader@example.test&action=agent.memory.read&identity=identity:ana",
    "tile evidence": "/console/memory/holdings/taint-wall/",
    "legacy": "/console/memory/legacy/",
    "saved views": "/console/views/",
}


@pytest.fixture
def admin_browser(agent_memory_dir, posture, user_with_password, browser_for):
    def open_as_admin(width: int):
        call_command("seed_demo")
        posture("standard")
        username = user_with_password(ROOT)
        browser = browser_for(width=width)
        browser.sign_in(username)
        return browser

    return open_as_admin


@pytest.mark.parametrize("width", [1280, 390])
def test_no_page_has_a_serious_or_critical_axe_violation(admin_browser, browser_for, width):
    browser = admin_browser(width)
    page = browser.page
    browser.goto(PAGES["records"])
    record_page = page.locator("td.record-title a").first.get_attribute("href")

    found: dict[str, list[str]] = {}
    for name, path in {**PAGES, "a record's page": record_page}.items():
        browser.goto(path)
        page.wait_for_load_state("networkidle")
        if violations := axe_violations(page):
            found[name] = violations
    signed_out = browser_for(width=width)
    signed_out.goto("/console/login/")
    if violations := axe_violations(signed_out.page):
        found["sign-in"] = violations

    assert found == {}, "\n".join(f"{name} at {width} px:\n  " + "\n  ".join(lines) for name, lines in found.items())


def _heights(page, selector: str) -> list[float]:
    return page.evaluate("""selector => Array.from(document.querySelectorAll(selector))
        .map(el => Math.round(el.getBoundingClientRect().height))""", selector)


def test_at_phone_width_the_records_start_on_the_first_screen_with_targets_of_24_px(admin_browser):
    browser = admin_browser(390)
    page = browser.page
    browser.goto(PAGES["records"])

    first_row = page.locator("tr.record-row").first.bounding_box()
    assert first_row["y"] < 900, "the filters fill the first screen"
    assert page.get_by_label("Status").is_hidden()
    page.get_by_text("Filters", exact=True).click()  # the fold opens with no script of its own
    assert page.get_by_label("Status").is_visible()
    assert min(_heights(page, ".records-export a")) >= 24
    search = page.get_by_label("Search").bounding_box()
    assert search["width"] > 300, "the search box keeps its placeholder whole"
    browser.assert_clean()


def test_the_audit_filters_are_as_tall_as_its_select(admin_browser):
    browser = admin_browser(1280)
    browser.goto(PAGES["audit"])

    heights = _heights(browser.page, ".audit .filters input, .audit .filters select")
    assert len(heights) == 5 and max(heights) - min(heights) <= 2, heights
