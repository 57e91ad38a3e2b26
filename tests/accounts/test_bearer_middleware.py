from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from mobkit_console.accounts.tokens import token_issue, user_for_subject

pytestmark = pytest.mark.django_db

SHELL = "/console/"


@pytest.fixture
def token(agent_memory_dir) -> str:
    return token_issue(user=user_for_subject("robot@example.com"))


def test_anonymous_shell_redirects_to_login(agent_memory_dir):
    response = Client().get(SHELL)
    assert response.status_code == 302
    assert response["Location"].startswith("/console/login/?next=/console/")


def test_bearer_header_authenticates(token):
    response = Client().get(SHELL, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert b"robot@example.com" in response.content


def test_auth_token_query_parameter_authenticates(token):
    response = Client().get(SHELL, {"auth_token": token})
    assert response.status_code == 200
    assert b"robot@example.com" in response.content


def test_bearer_header_wins_over_query_parameter(token):
    response = Client().get(
        SHELL, {"auth_token": "mkc_wrong"}, HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert response.status_code == 200


@pytest.mark.parametrize("header", ["Bearer mkc_wrong", "Bearer ", "Token whatever"])
def test_bad_or_foreign_authorization_is_anonymous(agent_memory_dir, header):
    response = Client().get(SHELL, HTTP_AUTHORIZATION=header)
    assert response.status_code == 302


def test_bad_token_overrides_a_valid_session(agent_memory_dir):
    user = get_user_model().objects.create_user("sam", password="a-long-password-1")
    client = Client()
    client.force_login(user)
    assert client.get(SHELL).status_code == 200

    assert client.get(SHELL, HTTP_AUTHORIZATION="Bearer mkc_wrong").status_code == 302


def test_token_requests_skip_csrf_but_session_posts_do_not(token):
    # Sign-out is a CSRF-protected POST: a cookie-less token caller needs no CSRF token ...
    client = Client(enforce_csrf_checks=True)
    assert client.post("/console/logout/", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 302

    # ... while a session caller without one is refused.
    session_client = Client(enforce_csrf_checks=True)
    session_client.force_login(get_user_model().objects.create_user("sam", password="a-long-password-1"))
    assert session_client.post("/console/logout/").status_code == 403


def test_a_token_caller_choosing_a_realm_gets_no_stored_session(token, realm_writer):
    # ?realm= is remembered in a browser's session; a program signs every request with its token,
    # so its choice lasts the request: no session row, no cookie, whatever it asks for.
    from django.contrib.sessions.models import Session

    realm_writer("default").close()
    for _ in range(3):
        response = Client().get("/console/memory/records/", {"realm": "default"}, HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.status_code == 200
        assert "sessionid" not in response.cookies
    assert Session.objects.count() == 0
