"""The operator's daily use in Chromium, at 1280 and 390 px (docs/daily-use.md): every page fits and
is clean, history keeps the list's state, the realm choice follows the operator, the keyboard is enough."""

from __future__ import annotations

import pytest

from memory_panel.simulator.store_writer import StoreWriter
from memory_panel.views.realm_choice import LISTED_REALMS_MAX
from tests.support.postures import REVIEWER
from tests.support.worlds import write_panel_realm

pytestmark = pytest.mark.browser

RECORDS = "/console/memory/records/"

# Controls a thumb must hit: at least 40 px tall at phone width. Links inside running text are not
# targets of their own (WCAG 2.5.8 exempts them), so only the page's own controls are measured.
TAP_TARGETS = (
    ".tabs a, main .button, header .button, main select, header select, main input:not([type=hidden]),"
    " .record-title a, .queue-item__title, .order-switch a, .holdings-table th a"
)


def row_ids(page) -> list[str]:
    return page.locator("tr.record-row").evaluate_all("rows => rows.map(r => r.dataset.memoryId)")


def small_targets(page) -> list[str]:
    return page.evaluate(
        """selector => Array.from(document.querySelectorAll(selector))
            .filter(el => el.offsetParent !== null)
            .map(el => [el.getBoundingClientRect().height, (el.textContent || el.name || el.id).trim().slice(0, 30)])
            .filter(([height]) => height < 39.5)
            .map(([height, name]) => `${name}: ${Math.round(height)}px`)""",
        TAP_TARGETS,
    )


def signed_in_on_records(agent_memory_dir, user_with_password, browser_for, path: str, **viewport):
    """The panel realm, an operator signed in, and Chromium on ``path`` (a Records URL)."""
    write_panel_realm(agent_memory_dir)
    username = user_with_password("operator@example.test")
    browser = browser_for(**viewport)
    browser.sign_in(username, path)
    return browser


def socket_refused(message: str) -> bool:
    """live_server speaks WSGI, so the timeline page's socket is refused there; the socket itself is
    driven under daphne in tests/timeline/test_browser_timeline.py."""
    return "/ws/console/timeline/" in message or message == "console error: [object Event]"


def load_more(page, times: int) -> None:
    for _ in range(times):
        shown = page.locator("tr.record-row").count()
        page.locator("#records-more a").click()
        page.wait_for_function("n => document.querySelectorAll('tr.record-row').length > n", arg=shown)


@pytest.mark.parametrize("width", [1280, 390])
def test_every_page_fits_the_width_with_big_enough_targets_and_no_console_errors(
    agent_memory_dir, user_with_password, browser_for, posture, width
):
    realm = write_panel_realm(agent_memory_dir)
    write_panel_realm(agent_memory_dir, "team:blue")
    posture("standard")
    username = user_with_password(REVIEWER)
    browser = browser_for(width=width)
    page = browser.page
    browser.sign_in(username)

    pages = {
        "shell": "/console/",
        "holdings": "/console/memory/",
        "records": f"{RECORDS}?limit=20",
        "biography": f"{RECORDS}{realm.ids['seat_v2']}/?realm=default",
        "quarantine": "/console/memory/quarantine/",
        "dreams": "/console/memory/dreams/",
        "ledger": "/console/memory/ledger/",
        "recall": "/console/memory/recall/?identity=identity%3Aluka&query_text=seats",
        "legacy": "/console/memory/legacy/",
        "timeline": "/console/timeline/",
    }
    for name, path in pages.items():
        browser.goto(path)
        page.wait_for_load_state("networkidle")
        browser.screenshot(f"daily-{name}", full_page=False)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{name} is {overflow}px wider than a {width}px viewport"
        if width == 390:
            assert small_targets(page) == [], name
    assert [m for m in browser.problems.messages if not socket_refused(m)] == []

    browser.goto("/console/memory/no-such-page/")
    assert page.locator("h1").inner_text() == "Not found"
    assert page.get_by_role("navigation", name="Console sections").is_visible()
    browser.screenshot("daily-404", full_page=False)


def test_dark_theme_follows_the_system_setting(agent_memory_dir, user_with_password, browser_for):
    write_panel_realm(agent_memory_dir)
    username = user_with_password("night@example.test")
    browser = browser_for(color_scheme="dark")
    page = browser.page
    browser.sign_in(username, f"{RECORDS}?limit=10")

    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    ink = page.evaluate("getComputedStyle(document.body).color")
    assert background == "rgb(20, 23, 27)" and ink == "rgb(228, 231, 235)"
    browser.screenshot("daily-records-dark", full_page=False)
    browser.goto("/console/memory/quarantine/")
    browser.screenshot("daily-quarantine-dark", full_page=False)
    browser.assert_clean()


@pytest.mark.parametrize("width", [1280, 390])
def test_filter_filter_back_forward_keeps_controls_and_rows_together(
    agent_memory_dir, user_with_password, browser_for, width
):
    browser = signed_in_on_records(agent_memory_dir, user_with_password, browser_for, RECORDS, width=width)
    page = browser.page
    assert page.url.endswith(RECORDS)
    if width == 390:
        page.get_by_text("Filters", exact=True).click()  # docs/daily-use.md §1: folded on a phone

    page.get_by_label("Status").select_option("superseded")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(f"**{RECORDS}?status=superseded")  # no empty filters in the URL
    superseded = row_ids(page)

    page.get_by_label("Status").select_option("active")
    page.get_by_label("Kind").select_option("procedure")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(f"**{RECORDS}?status=active&kind=procedure")
    procedures = row_ids(page)
    assert procedures and set(procedures).isdisjoint(superseded)

    def controls() -> tuple[str, str]:
        return page.get_by_label("Status").input_value(), page.get_by_label("Kind").input_value()

    page.go_back()
    page.wait_for_url(f"**{RECORDS}?status=superseded")
    page.wait_for_function("() => document.querySelector('#filter-kind').value === ''")
    assert controls() == ("superseded", "")
    assert row_ids(page) == superseded
    assert page.locator("tr.record-row:not(.status-superseded)").count() == 0

    page.go_forward()
    page.wait_for_url(f"**{RECORDS}?status=active&kind=procedure")
    page.wait_for_function("() => document.querySelector('#filter-kind').value === 'procedure'")
    assert controls() == ("active", "procedure")
    assert row_ids(page) == procedures

    page.reload()
    assert controls() == ("active", "procedure") and row_ids(page) == procedures
    browser.assert_clean()


@pytest.mark.parametrize("width", [1280, 390])
def test_load_more_three_times_open_a_row_and_back_returns_to_the_same_rows_and_place(
    agent_memory_dir, user_with_password, browser_for, width
):
    browser = signed_in_on_records(
        agent_memory_dir, user_with_password, browser_for, f"{RECORDS}?limit=5", width=width, height=700
    )
    page = browser.page

    load_more(page, 3)
    page.wait_for_url(f"**{RECORDS}?limit=5&shown=20")
    loaded = row_ids(page)
    assert len(loaded) == len(set(loaded)) == 20

    target = page.locator("tr.record-row").nth(17)
    target.scroll_into_view_if_needed()
    opened = target.get_attribute("data-memory-id")
    target.locator(".record-title a").click()
    page.wait_for_url(f"**/records/{opened}/**")

    page.go_back()
    page.wait_for_url(f"**{RECORDS}?limit=5&shown=20")
    page.wait_for_load_state()
    assert row_ids(page) == loaded
    row = page.locator(f'tr.record-row[data-memory-id="{opened}"]')
    page.wait_for_function(
        """id => { const r = document.querySelector(`tr.record-row[data-memory-id="${id}"]`).getBoundingClientRect();
                  return r.bottom > 0 && r.top < window.innerHeight; }""",
        arg=opened,
    )
    assert row.is_visible()
    browser.assert_clean()


def test_realm_switch_persists_across_every_page(agent_memory_dir, user_with_password, browser_for):
    default = write_panel_realm(agent_memory_dir)
    write_panel_realm(agent_memory_dir, "team:blue")
    username = user_with_password("realms@example.test")
    browser = browser_for()
    page = browser.page
    browser.sign_in(username, "/console/memory/")

    switcher = page.get_by_role("banner").get_by_label("Realm")
    switcher.select_option("team:blue")
    page.get_by_role("button", name="Switch").click()
    page.wait_for_url("**/console/memory/")
    assert page.locator("h2 code").all_inner_texts() == ["team:blue"]

    for path in ("/console/", RECORDS, f"{RECORDS}{default.ids['seat_v1']}/?realm=default",
                 "/console/memory/quarantine/", "/console/memory/dreams/", "/console/memory/ledger/",
                 "/console/memory/recall/", "/console/memory/legacy/", "/console/timeline/"):
        browser.goto(path)
        assert page.get_by_role("banner").get_by_label("Realm").input_value() == "team:blue", path
        if path == RECORDS:
            realms = page.locator("tr.record-row .record-title a").evaluate_all(
                "links => [...new Set(links.map(a => new URL(a.href).searchParams.get('realm')))]"
            )
            assert realms == ["team:blue"]

    # From a page with no realm of its own, "All realms" clears the choice for every page again.
    page.get_by_role("banner").get_by_label("Realm").select_option("")
    page.get_by_role("button", name="Switch").click()
    page.wait_for_url("**/console/timeline/")
    browser.goto("/console/memory/")
    assert page.locator("h2 code").all_inner_texts() == ["default", "team:blue"]
    assert [m for m in browser.problems.messages if not socket_refused(m)] == []


@pytest.mark.parametrize("width", [1280, 390])
def test_many_realms_are_found_by_typing_part_of_a_name(agent_memory_dir, user_with_password, browser_for, width):
    write_panel_realm(agent_memory_dir)
    for n in range(LISTED_REALMS_MAX + 5):
        StoreWriter.create(f"fleet-{n:03d}", root=agent_memory_dir).close()
    username = user_with_password("fleet@example.test")
    browser = browser_for(width=width)
    page = browser.page
    browser.sign_in(username, "/console/memory/")

    field = page.get_by_role("banner").get_by_label("Realm")
    field.fill("LEET-01")
    page.locator('#realm-switch-options option[value="fleet-019"]').wait_for(state="attached")
    assert page.locator("#realm-switch-options option").count() == 10
    field.fill("fleet-012")
    page.get_by_role("button", name="Switch").click()
    page.wait_for_url("**/console/memory/")

    assert page.locator("h2 code").all_inner_texts() == ["fleet-012"]
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    browser.assert_clean()


def test_keyboard_alone_opens_the_third_record(agent_memory_dir, user_with_password, browser_for):
    browser = signed_in_on_records(agent_memory_dir, user_with_password, browser_for, f"{RECORDS}?limit=10")
    page = browser.page
    third = row_ids(page)[2]

    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "filter-q"  # the search box, first of the filters
    page.keyboard.press("Escape")  # leaves the filter, back to the list's keys
    assert page.evaluate("document.activeElement === document.body")

    page.keyboard.press("?")
    assert page.get_by_role("dialog", name="Keyboard shortcuts").is_visible()
    page.keyboard.press("Escape")
    assert page.get_by_role("dialog", name="Keyboard shortcuts").count() == 0

    for _ in range(3):
        page.keyboard.press("j")
    page.keyboard.press("k")
    page.keyboard.press("j")
    focused = page.evaluate("document.activeElement.closest('tr.record-row').dataset.memoryId")
    assert focused == third
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"  # the focus ring shows where j/k went
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/records/{third}/**")
    assert page.locator("h1").is_visible()
    browser.assert_clean()
