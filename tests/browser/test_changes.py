"""What changed between two moments and two realms compared, in Chromium (docs/history.md §5, §6):
at 1280 and 390 px, light and dark, the counts and the rows are there, a superseded record's word
diff and a differing key's body diff fit the window (a body of one long unbroken word included),
and axe finds nothing serious."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from memory_panel.simulator.store_writer import ManualClock, StoreWriter, identity_scope
from tests.support.axe import axe_violations
from tests.support.history import LUKA, REALM, START, write_script

pytestmark = pytest.mark.browser

REPLICA = "replica"
UNBROKEN = "x" * 400


def _overflow(page) -> tuple[int, list[str]]:
    overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    wide = page.evaluate("""() => Array.from(document.querySelectorAll('body *'))
        .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .filter(e => !e.closest('.table-wrap') || e.classList.contains('table-wrap'))
        .slice(0, 8).map(e => e.tagName + '.' + e.className + '#' + e.id)""")
    return overflow, wide


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_changes_and_a_realm_comparison_read_at_both_widths(agent_memory_dir, user_with_password, browser_for,
                                                             width, scheme):
    script = write_script(agent_memory_dir)
    with StoreWriter.create(REPLICA, root=agent_memory_dir, clock=ManualClock(int(START.timestamp() * 1000))) as w:
        w.remember(identity_scope(REPLICA, LUKA), "Route to the summit", f"Take the {UNBROKEN} ridge, then the saddle.")
        w.remember(identity_scope(REPLICA, LUKA), f"Only on the replica {UNBROKEN[:150]}", "Written where the copy drifted.")
    username = user_with_password("historian@example.test")
    browser = browser_for(width=width, color_scheme=scheme)
    page = browser.page

    window = {"realm": REALM, "from": script.before(), "to": script.between("tombstone")}
    browser.sign_in(username, "/console/memory/changes/?" + urlencode(window))
    assert page.get_by_text("Route to the summit").first.is_visible()
    assert _overflow(page)[0] <= 0, _overflow(page)
    assert axe_violations(page) == []

    # Both realms after the supersede: the route differs (by a body of one long word), one key only in the replica.
    browser.goto("/console/memory/changes/?" + urlencode({"realm": REALM, "against": REPLICA,
                                                          "as_of": script.between("supersede")}))
    assert page.get_by_text("Only on the replica").first.is_visible()
    assert page.get_by_text("Route to the summit").first.is_visible()
    assert _overflow(page)[0] <= 0, _overflow(page)
    assert axe_violations(page) == []
    browser.assert_clean()
