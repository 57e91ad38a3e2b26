from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "demo-console-password"


@pytest.fixture
def user(agent_memory_dir):
    return get_user_model().objects.create_user("demo", password=PASSWORD)


def csrf_token_from(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)


def test_login_page_renders_a_csrf_protected_form():
    response = Client().get("/console/login/")

    html = response.content.decode()
    assert response.status_code == 200
    assert 'name="username"' in html and 'name="password"' in html
    assert "csrfmiddlewaretoken" in html
    assert "<style" not in html and "style=" not in html
    assert re.search(r"<script(?![^>]*\bsrc=)", html) is None  # no inline script


def test_sign_in_with_csrf_token_lands_on_the_shell(user):
    client = Client(enforce_csrf_checks=True)
    token = csrf_token_from(client.get("/console/login/").content.decode())

    response = client.post(
        "/console/login/", {"username": "demo", "password": PASSWORD, "csrfmiddlewaretoken": token}
    )

    assert response.status_code == 302 and response["Location"] == "/console/"
    assert client.get("/console/").status_code == 200


def test_sign_in_without_csrf_token_is_refused(user):
    client = Client(enforce_csrf_checks=True)
    client.get("/console/login/")

    response = client.post("/console/login/", {"username": "demo", "password": PASSWORD})

    assert response.status_code == 403


def test_wrong_password_shows_an_error_and_stays_signed_out(user):
    client = Client()
    response = client.post("/console/login/", {"username": "demo", "password": "nope"})

    assert response.status_code == 200
    assert b'role="alert"' in response.content
    assert client.get("/console/").status_code == 302


def test_sign_in_returns_to_next(user):
    response = Client().post(
        "/console/login/", {"username": "demo", "password": PASSWORD, "next": "/console/timeline/"}
    )
    assert response["Location"] == "/console/timeline/"


def test_sign_out_is_a_post_and_ends_the_session(user):
    client = Client()
    client.force_login(user)
    page = client.get("/console/").content.decode()
    assert 'action="/console/logout/"' in page and 'method="post"' in page

    assert client.get("/console/logout/").status_code == 405
    assert client.post("/console/logout/").status_code == 302
    assert client.get("/console/").status_code == 302
