"""The access explainer in Chromium (docs/access.md §2.9): a reader is refused it, the refusal shows
among the recent denials for an admin, whose Explain link and form answer why."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.support.postures import READER, ROOT

pytestmark = pytest.mark.browser


def test_an_admin_explains_a_readers_denial_and_asks_about_an_agent(agent_memory_dir, posture, user_with_password, browser_for):
    call_command("seed_demo")
    posture("standard")
    reader_name, root_name = user_with_password(READER), user_with_password(ROOT)

    reader = browser_for()
    reader.sign_in(reader_name)
    assert reader.page.locator('nav a[href="/console/access/"]').count() == 0
    response = reader.page.goto(reader.base_url + "/console/access/")
    assert response.status == 403 and "access.admin" in reader.page.locator("main").inner_text()

    admin = browser_for(width=390)
    admin.sign_in(root_name)
    page = admin.page
    with page.expect_navigation():
        page.locator('nav a[href="/console/access/"]').click()
    denial = page.locator("tr[data-audit-id]", has_text=READER).first
    assert "access.admin" in denial.inner_text()
    with page.expect_navigation():
        denial.get_by_role("link", name="Explain").click()
    assert page.locator("[data-explain-summary]").inner_text() == (
        f"Denied: {READER} may not access.admin on no particular resource "
        "(needs access.admin, resource-less: no rule allows access.admin).")

    page.get_by_label("Action").select_option("agent.memory.read")
    page.get_by_label("Agent identity").fill("identity:luka")
    with page.expect_navigation():
        page.get_by_role("button", name="Explain").click()
    assert page.locator("[data-explain-summary]").inner_text() == (
        f"Allowed: {READER} may agent.memory.read on identity:luka, by rule readers-read.")
    assert page.locator('tr[data-rule-id="scout-reads-one-identity"]').is_visible()
    admin.assert_clean()
