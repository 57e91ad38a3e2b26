"""A 404 and a 500 on any HTML route are the console's own styled pages, never Django's bare text."""

from __future__ import annotations

import pytest
from django.test import Client


# Every HTML page the console serves (docs/wire-contract.md §C.2), a biography included.
HTML_ROUTES = (
    "/console/",
    "/console/memory/",
    "/console/memory/records/",
    "/console/memory/records/mem-any/",
    "/console/memory/quarantine/",
    "/console/memory/dreams/",
    "/console/memory/ledger/",
    "/console/memory/recall/?identity=identity%3Aluka&query_text=travel",
    "/console/memory/legacy/",
    "/console/timeline/",
)
CONSOLE_PAGE = ('<link rel="stylesheet" href="/static/css/console.css">', 'class="site-header"', 'id="main"')


def assert_console_page(response, status: int, heading: str) -> None:
    body = response.content.decode()
    assert response.status_code == status
    assert all(mark in body for mark in CONSOLE_PAGE), body[:400]
    assert f'<h1 id="error-heading">{heading}</h1>' in body
    assert "default-src 'self'" in response["Content-Security-Policy"]


@pytest.fixture
def client(client_for, demo_realms) -> Client:
    return client_for("ops@example.test")


@pytest.mark.parametrize("route", HTML_ROUTES)
def test_a_path_under_any_html_route_that_names_nothing_is_the_console_404(client, route):
    path = route.split("?", 1)[0].rstrip("/") + "/no-such-page/"
    response = client.get(path)

    assert_console_page(response, 404, "Not found")
    assert 'aria-label="Console sections"' in response.content.decode()  # the way on is in the header


def test_the_404_page_names_the_path_without_running_it(client):
    response = client.get('/console/<script>alert(1)</script>/')

    assert "<code>/console/%3Cscript%3Ealert%281%29%3C/script%3E/</code>" in response.content.decode()
    assert "<script>alert" not in response.content.decode()


@pytest.fixture
def failing_pages(monkeypatch):
    """Make every page fail while it renders: the layout context processor raises, as a bug would."""

    def broken(access):
        raise RuntimeError("a bug in the console")

    monkeypatch.setattr("mobkit_console.shell.memory_nav", broken)


@pytest.mark.parametrize("route", HTML_ROUTES)
def test_a_failure_on_any_html_route_is_the_console_500(client_for, demo_realms, failing_pages, route):
    client = client_for("ops@example.test")
    client.raise_request_exception = False

    response = client.get(route)

    assert_console_page(response, 500, "Something went wrong")
    assert "a bug in the console" not in response.content.decode()  # no internals shown
