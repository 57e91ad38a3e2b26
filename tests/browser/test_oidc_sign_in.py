"""Signing in through the company's identity provider, in Chromium (docs/audit-and-oidc.md §6): the
authorization-code flow with PKCE against a small provider on loopback, beside the password form."""

from __future__ import annotations

import pytest

from tests.support.postures import ROOT
from tests.support.worlds import PANEL_QUARANTINED_BODY, write_panel_realm

pytestmark = pytest.mark.browser

ANA = "ana@example.test"


def test_sign_in_through_the_provider_with_its_groups_then_sign_out(
    agent_memory_dir, live_realm_aliases, oidc_issuer, posture, settings, browser_for
):
    realm = write_panel_realm(agent_memory_dir)
    posture("auditors")
    settings.MOBKIT_OIDC_GROUPS_CLAIM = "groups"
    # Ana is no reviewer in access.toml; the provider vouches for her group.
    oidc_issuer.users["ana"] = {"sub": "u-ana", "email": ANA, "groups": ["reviewers"]}
    oidc_issuer.users["root"] = {"sub": "u-root", "email": ROOT}
    browser = browser_for()
    page = browser.page

    browser.goto("/console/memory/quarantine/")
    page.wait_for_url("**/console/login/?next=**")
    page.get_by_role("link", name="Sign in with your company account").click()
    page.wait_for_url(f"{oidc_issuer.url}/authorize**")
    assert "code_challenge_method=S256" in page.url
    page.get_by_label("Login").fill("ana")
    page.get_by_role("button", name="Continue").click()

    page.wait_for_url("**/console/memory/quarantine/")
    assert page.locator(".session__subject").inner_text() == ANA
    item = page.locator(f'li.queue-item[data-memory-id="{realm.ids["quarantined"]}"]')
    assert PANEL_QUARANTINED_BODY.split()[0] in item.inner_text()  # the group made her a reviewer
    assert oidc_issuer.token_requests[-1]["code_verifier"]  # PKCE: the verifier went with the code
    browser.screenshot("oidc-signed-in")

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/console/login/")
    browser.goto("/console/memory/quarantine/")
    page.wait_for_url("**/console/login/?next=**")  # the console session has ended

    page.get_by_role("link", name="Sign in with your company account").click()
    page.get_by_label("Login").fill("root")
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url("**/console/memory/quarantine/")  # the page asked for before signing in
    browser.goto("/console/audit/?action=sign_in")
    rows = page.locator("tr[data-audit-id]").all_inner_texts()
    assert any(ANA in row and "oidc" in row and "ok" in row for row in rows), rows
    browser.assert_clean()


def test_a_refused_sign_in_returns_to_the_form_and_the_password_form_stays(
    agent_memory_dir, live_realm_aliases, oidc_issuer, user_with_password, browser_for
):
    username = user_with_password("pat@example.test")
    oidc_issuer.users["mallory"] = {"sub": "u-m"}  # no email claim: no subject to sign in
    browser = browser_for()
    page = browser.page

    browser.goto("/console/login/")
    page.get_by_role("link", name="Sign in with your company account").click()
    page.get_by_label("Login").fill("mallory")
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url("**/console/login/?sign_in=failed")
    assert "did not succeed" in page.get_by_role("alert").inner_text()

    browser.sign_in(username, "/console/")
    assert page.locator(".session__subject").inner_text() == "pat@example.test"
    browser.assert_clean()
