"""The browser sign-in's authorization-code flow with PKCE, followed hop by hop with a test client
against the provider on loopback (the same journey as tests/browser/test_oidc_sign_in.py, for
machines without Chromium): docs/audit-and-oidc.md §6."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
import requests
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


def test_a_replayed_callback_signs_nobody_in(oidc_issuer, world):
    oidc_issuer.users["ana"] = {"sub": "u-ana", "email": ANA}
    first = Client()
    start = first.get("/console/oidc/authenticate/")
    params = {k: v[0] for k, v in parse_qs(urlsplit(start["Location"]).query).items()}
    approved = requests.post(start["Location"].split("?")[0], data={**params, "login": "ana"}, allow_redirects=False, timeout=10)
    callback = urlsplit(approved.headers["Location"])
    query = {k: v[0] for k, v in parse_qs(callback.query).items()}
    # Another browser (no state in its session) presenting the same code gets nowhere.
    stranger = Client()
    assert stranger.get(callback.path, query)["Location"] == "/console/login/?sign_in=failed"
    assert stranger.get("/console/experience").status_code == 401


def test_browser_sign_in_is_off_without_a_client(oidc_issuer, world, settings):
    settings.MOBKIT_OIDC_CLIENT_SECRET = None
    assert Client().get("/console/oidc/authenticate/").status_code == 404
    assert b"company account" not in Client().get("/console/login/").content


def test_the_login_page_offers_the_provider_beside_the_password_form(oidc_issuer, world):
    page = Client().get("/console/login/", {"next": QUEUE}).content.decode()
    assert 'href="/console/oidc/authenticate/?next=/console/memory/quarantine/"' in page
    assert 'name="password"' in page
