"""The browser sign-in's authorization-code flow with PKCE, followed hop by hop with a test client
against the provider on loopback (the same journey as tests/browser/test_oidc_sign_in.py, for
machines without Chromium): docs/audit-and-oidc.md §6."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model
from django.test import Client

from tests.support.audit import audit_entries, entries_for
from tests.support.clients import signed_in_client, user_with_subject
from tests.support.oidc import QUEUE, sign_in_through_provider
from tests.support.postures import ROOT
from tests.support.worlds import QUARANTINED_BODY

pytestmark = pytest.mark.django_db

ANA = "ana@example.test"


def test_the_code_flow_signs_in_the_email_claim_with_the_groups_the_provider_vouches_for(
    oidc_issuer, world, posture, settings
):
    posture("auditors")
    settings.MOBKIT_OIDC_GROUPS_CLAIM = "groups"
    oidc_issuer.users["ana"] = {"sub": "u-ana", "email": ANA, "groups": ["reviewers"]}
    client = Client()

    assert sign_in_through_provider(client, "ana") == QUEUE
    assert oidc_issuer.token_requests[-1]["code_verifier"]
    assert client.get("/console/experience").json()["access"] == {
        "available": True, "enabled": True, "subject": ANA, "groups": ["reviewers"], "can_administer": False,
    }
    body = client.get(f"/console/memory/records/{world['quarantined'].id}/")
    assert body.status_code == 200 and QUARANTINED_BODY.encode() in body.content

    client.post("/console/logout/")
    assert client.get(QUEUE).status_code == 302  # the console session has ended

    sign_ins = entries_for(audit_entries(signed_in_client(user_with_subject(ROOT))), "sign_in")
    assert [(e["subject"], e["outcome"], e["detail"]) for e in sign_ins if e["subject"] == ANA] == [
        (ANA, "ok", {"method": "oidc"})
    ]


def test_a_token_without_the_subject_claim_is_a_failed_sign_in(oidc_issuer, world, posture):
    posture("auditors")
    oidc_issuer.users["mallory"] = {"sub": "u-m"}
    client = Client()
    assert sign_in_through_provider(client, "mallory") == "/console/login/?sign_in=failed"
    assert client.get(QUEUE).status_code == 302
    failed = [e for e in entries_for(audit_entries(signed_in_client(user_with_subject(ROOT))), "sign_in") if e["outcome"] == "failed"]
    assert [e["detail"] for e in failed] == [{"method": "oidc"}]


@pytest.mark.parametrize("claims", [
    pytest.param({"email": ROOT, "email_verified": False}, id="unverified-email"),
    pytest.param({"email": ROOT, "email_verified": None}, id="no-email-verified"),
    pytest.param({"email": "ana\x00@example.test"}, id="nul-in-the-subject"),
    pytest.param({"email": "ana@example.test\r\nroot@example.test"}, id="line-break-in-the-subject"),
])
def test_an_unverified_email_or_a_control_character_is_a_failed_sign_in(oidc_issuer, world, posture, claims):
    posture("auditors")
    oidc_issuer.users["mallory"] = {"sub": "u-m", **claims}
    users = get_user_model().objects.count()
    client = Client()
    assert sign_in_through_provider(client, "mallory") == "/console/login/?sign_in=failed"
    assert client.get("/console/experience").status_code == 401
    assert get_user_model().objects.count() == users


def _approved_callback(oidc_issuer, client: Client) -> tuple[str, dict[str, str]]:
    """The provider's redirect back to the console for a sign-in ``client`` started: path and query."""
    start = client.get("/console/oidc/authenticate/")
    params = {k: v[0] for k, v in parse_qs(urlsplit(start["Location"]).query).items()}
    approved = requests.post(start["Location"].split("?")[0], data={**params, "login": "ana"}, allow_redirects=False, timeout=10)
    callback = urlsplit(approved.headers["Location"])
    return callback.path, {k: v[0] for k, v in parse_qs(callback.query).items()}


def test_a_replayed_or_foreign_callback_is_the_sign_in_page_saying_so(oidc_issuer, world, posture):
    posture("auditors")
    oidc_issuer.users["ana"] = {"sub": "u-ana", "email": ANA}
    first = Client()
    path, query = _approved_callback(oidc_issuer, first)
    assert first.get(path, query).status_code == 302  # signed in
    first.post("/console/logout/")

    # The same browser replaying its callback, and another browser (no state in its session)
    # presenting the same code: neither gets further than the sign-in page, which says why.
    for browser in (first, Client()):
        replayed = browser.get(path, query, follow=True)
        assert replayed.redirect_chain == [("/console/login/?sign_in=stale", 302)]
        assert replayed.status_code == 200
        assert b'role="alert"><p>That sign-in through the identity provider was already used' in replayed.content
        assert browser.get("/console/experience").status_code == 401

    failed = [e for e in entries_for(audit_entries(signed_in_client(user_with_subject(ROOT))), "sign_in") if e["outcome"] == "failed"]
    assert len(failed) == 2 and all(e["detail"]["method"] == "oidc" and "state" in e["detail"]["reason"] for e in failed)


def test_the_scopes_asked_for_are_a_setting_and_bring_the_groups_released_under_them(
    oidc_issuer, world, posture, settings
):
    posture("auditors")
    settings.MOBKIT_OIDC_GROUPS_CLAIM = "groups"
    oidc_issuer.scoped = {"groups": "groups"}  # as a provider that releases groups under their own scope
    oidc_issuer.users["ana"] = {"sub": "u-ana", "email": ANA, "groups": ["reviewers"]}

    default = Client()
    sign_in_through_provider(default, "ana")
    assert default.get("/console/experience").json()["access"]["groups"] == []

    settings.OIDC_RP_SCOPES = "openid email profile groups"  # MOBKIT_OIDC_SCOPES
    start = Client().get("/console/oidc/authenticate/")
    assert parse_qs(urlsplit(start["Location"]).query)["scope"] == ["openid email profile groups"]
    with_groups = Client()
    sign_in_through_provider(with_groups, "ana")
    assert with_groups.get("/console/experience").json()["access"]["groups"] == ["reviewers"]


def test_browser_sign_in_is_off_without_a_client(oidc_issuer, world, settings):
    settings.MOBKIT_OIDC_CLIENT_SECRET = None
    assert Client().get("/console/oidc/authenticate/").status_code == 404
    assert b"company account" not in Client().get("/console/login/").content


def test_the_login_page_offers_the_provider_beside_the_password_form(oidc_issuer, world):
    page = Client().get("/console/login/", {"next": QUEUE}).content.decode()
    assert 'href="/console/oidc/authenticate/?next=/console/memory/quarantine/"' in page
    assert 'name="password"' in page
