"""Browser journeys through Holdings' verdict tiles, Knowledge and Pipeline (Chromium, 1280 and 390 wide)."""

from __future__ import annotations

import pytest

from memory_panel.simulator.store_writer import StoreWriter
from tests.support.postures import READER, REVIEWER
from tests.support.worlds import PANEL_QUARANTINED_TITLE as QUARANTINED_TITLE, write_panel_realm

pytestmark = pytest.mark.browser
WIDTHS = [1280, 390]


def lattice_breach(root) -> str:
    """The panel realm with one agent-authored record hand-raised to operator trust."""
    realm = write_panel_realm(root)
    with StoreWriter.open("default", root=root) as w:
        w.conn.execute("UPDATE records SET trust = 'operator' WHERE memory_id = ?", (realm.ids["seat_v1"],))
        w.conn.commit()
    return realm.ids["seat_v1"]


def fits(browser, name: str) -> None:
    page = browser.page
    page.wait_for_load_state("networkidle")
    browser.screenshot(name)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"{name} is {overflow}px wider than the viewport"


@pytest.mark.parametrize("width", WIDTHS)
def test_tile_to_evidence_to_record(agent_memory_dir, user_with_password, browser_for, width):
    offender = lattice_breach(agent_memory_dir)
    username = user_with_password("operator@example.test")
    browser = browser_for(width=width)
    page = browser.page
    browser.sign_in(username)

    lattice = page.locator('[data-tile="lattice"]')
    assert lattice.get_attribute("data-status") == "violated"
    assert page.locator("[data-tile]").count() == 6
    fits(browser, "holdings-tiles")

    lattice.get_by_role("link", name="All 1 record").click()
    page.wait_for_url("**/console/memory/holdings/lattice/")
    assert page.locator("#rule").inner_text().startswith("No LLM-authored record sits above agent_observed")
    fits(browser, "tile-evidence")

    page.get_by_role("link", name="Prefers window seats").first.click()
    page.wait_for_url(f"**/console/memory/records/{offender}/?realm=default")
    fits(browser, "tile-record")
    browser.goto("/console/memory/")
    # docs/daily-use.md §7: the tile names its evidence by title, the id in its tooltip only.
    evidence = page.locator('[data-tile="lattice"] .tile__evidence')
    assert offender not in evidence.inner_text()
    link = evidence.get_by_role("link", name="Prefers window seats")
    assert link.get_attribute("title") == offender
    link.click()
    page.wait_for_url(f"**/console/memory/records/{offender}/?realm=default")
    browser.assert_clean()


@pytest.mark.parametrize("width", WIDTHS)
def test_knowledge_for_an_identity(agent_memory_dir, user_with_password, browser_for, width):
    write_panel_realm(agent_memory_dir)
    username = user_with_password("operator@example.test")
    browser = browser_for(width=width)
    page = browser.page
    browser.sign_in(username, "/console/memory/knowledge/")

    page.get_by_label("Identity", exact=True).fill("luka")  # docs/search.md §8: read as identity:luka
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**identity=luka**")
    assert "identity:luka" in page.locator("#knowledge-heading").inner_text()
    assert page.locator('[data-part="identity"] strong').inner_text() == "24"
    assert page.locator("[data-gauge]").count() == 3
    assert page.locator("tr[data-injection]").count() == 2
    fits(browser, "knowledge")
    page.get_by_role("link", name="Preview what recall would inject for identity:luka →").click()
    page.wait_for_url("**/console/memory/recall/?identity=identity%3Aluka")
    browser.assert_clean()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("subject", [REVIEWER, READER])
def test_pipeline_as_reviewer_and_as_reader(agent_memory_dir, user_with_password, browser_for, posture, width,
                                            subject):
    write_panel_realm(agent_memory_dir)
    posture("standard")
    username = user_with_password(subject)
    browser = browser_for(width=width)
    page = browser.page
    browser.sign_in(username)

    page.get_by_role("navigation", name="Console sections").get_by_role("link", name="Pipeline").click()
    page.wait_for_url("**/console/memory/pipeline/")
    quarantined = page.locator('[data-stage="quarantined"] strong').inner_text()
    if subject == REVIEWER:
        assert quarantined == "2"  # the tainted claimant and mira's claim
        assert page.get_by_text(QUARANTINED_TITLE).is_visible()
    else:
        assert quarantined == "no grant"
        assert page.get_by_text(QUARANTINED_TITLE).count() == 0
    fits(browser, f"pipeline-{'reviewer' if subject == REVIEWER else 'reader'}")
    browser.assert_clean()


def test_navigation_has_every_page(agent_memory_dir, user_with_password, browser_for):
    write_panel_realm(agent_memory_dir)
    username = user_with_password("operator@example.test")
    browser = browser_for()
    browser.sign_in(username)

    tabs = browser.page.get_by_role("navigation", name="Console sections")
    for name in ("Holdings", "Records", "Knowledge", "Pipeline", "Quarantine", "Dreams", "Timeline", "Ledger",
                 "Recall", "Legacy"):
        assert tabs.get_by_role("link", name=name, exact=True).is_visible(), name
    browser.assert_clean()
