"""docs/wire-contract.md §C.2: every HTML route answers htmx with its fragment, anyone else with the page."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db

HTML_ROUTES = (
    "/console/",
    "/console/memory/",
    "/console/memory/records/",
    "/console/memory/quarantine/",
    "/console/memory/dreams/",
    "/console/memory/ledger/",
    "/console/memory/recall/?identity=identity%3Aluka&query_text=travel",
    "/console/memory/legacy/",
    "/console/timeline/",
)


@pytest.fixture
def client(demo_realms) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("ops", "ops@example.test", "pw"))
    return client


@pytest.mark.parametrize("route", HTML_ROUTES)
def test_plain_request_gets_the_page_and_htmx_gets_the_fragment(client, route):
    page = client.get(route)
    fragment = client.get(route, HTTP_HX_REQUEST="true")
    restore = client.get(route, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true")
    for response in (page, fragment, restore):
        assert response.status_code == 200
        assert "HX-Request" in response["Vary"]
        assert "default-src 'self'" in response["Content-Security-Policy"]
    assert b"<html" in page.content and b"<html" in restore.content
    assert b"<html" not in fragment.content


@pytest.mark.parametrize("route", HTML_ROUTES)
def test_anonymous_request_is_sent_to_sign_in(route, db):
    response = Client().get(route)
    assert response.status_code == 302
    assert response["Location"].startswith("/console/login/")




def assert_not_stored(response) -> None:
    directives = {d.strip() for d in response.get("Cache-Control", "").split(",")}
    assert {"private", "no-store"} <= directives, response.get("Cache-Control")


@pytest.mark.parametrize("route", HTML_ROUTES + ("/console/experience",))
def test_signed_in_responses_are_never_stored_by_a_cache(client, route):
    for response in (client.get(route), client.get(route, HTTP_HX_REQUEST="true")):
        assert response.status_code == 200
        assert_not_stored(response)


def test_signed_in_rpc_answers_are_never_stored_by_a_cache(client, db):
    response = client.post("/console/rpc", {"jsonrpc": "2.0", "id": 1, "method": "mobkit/capabilities"},
                           content_type="application/json")
    assert response.status_code == 200
    assert_not_stored(response)


def test_bearer_token_answers_are_never_stored_by_a_cache(demo_realms):
    from mobkit_console.accounts.tokens import token_issue, user_for_subject

    token = token_issue(user=user_for_subject("program@example.test"))
    response = Client().get("/console/memory/records/", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert_not_stored(response)
