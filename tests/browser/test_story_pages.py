"""Pages a newcomer reads, in a real browser: a version diff readable in colour and without."""

from __future__ import annotations

import pytest

from tests.support.worlds import write_panel_realm

RECORDS = "/console/memory/records/"

STYLE_OF = """el => {
  const style = getComputedStyle(el);
  return {color: style.color, background: style.backgroundColor, line: style.textDecorationLine};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_diff_colours_removed_and_added_words_apart_and_marks_them_without_colour(
    agent_memory_dir, user_with_password, browser_for, scheme
):
    realm = write_panel_realm(agent_memory_dir)
    username = user_with_password(f"diff-{scheme}@example.test")
    browser = browser_for(color_scheme=scheme)
    page = browser.page
    step = realm.ids["seat_v2"]  # "Prefers window seats" → "Prefers aisle seats"
    browser.sign_in(username, f"{RECORDS}{step}/?realm=default&diff={step}#diff")

    title = page.locator(".diff-field", has=page.locator("dt", has_text="title")).locator(".diff-text")
    removed = title.locator("del").evaluate(STYLE_OF)
    added = title.locator("ins").evaluate(STYLE_OF)
    ink = page.evaluate("getComputedStyle(document.body).color")

    gap = page.evaluate("([a, b]) => b.getBoundingClientRect().left - a.getBoundingClientRect().right",
                        [title.locator("del").element_handle(), title.locator("ins").element_handle()])
    assert gap >= 3  # a space between "window" and "aisle", not "windowaisle"
    assert removed["color"] != added["color"] and ink not in (removed["color"], added["color"])
    assert removed["background"] != added["background"]
    assert removed["line"] == "line-through" and added["line"] == "underline"
    # Screen readers hear which is which: the marker text is in the DOM, off screen.
    assert title.text_content() == "Prefers [removed: window] [added: aisle] seats"
    browser.screenshot(f"diff-{scheme}", full_page=False)
    browser.assert_clean()
