"""Browser journeys: Playwright's sync API driving Debian's Chromium against pytest-django's live_server.

Never downloads a browser: without /usr/bin/chromium the journeys are skipped with that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model

from tests.support.realm_guard import allow_realm_aliases

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "correct horse battery staple"
SCREENSHOTS = Path(django_settings.BASE_DIR) / "test-artifacts" / "screenshots"

if TYPE_CHECKING:
    from playwright.sync_api import ConsoleMessage, Page


@pytest.fixture
def live_realm_aliases(transactional_db, monkeypatch, django_db_blocker) -> None:
    """Let the live server's threads open the read-only realm aliases (see tests/support/realm_guard.py)."""
    allow_realm_aliases(monkeypatch, django_db_blocker)


@pytest.fixture
def user_with_password(live_realm_aliases) -> Callable[[str], str]:
    """Create a user (subject = email) who signs in with PASSWORD; returns the username.

    Users are made before Playwright starts: its sync API runs an event loop in this thread, and
    Django refuses ORM calls while one runs.
    """

    def make(subject: str) -> str:
        username = subject.split("@")[0]
        get_user_model().objects.create_user(username, email=subject, password=PASSWORD)
        return username

    return make


@dataclass
class Problems:
    """Console errors, page errors and CSP violations seen while a journey ran."""

    messages: list[str] = field(default_factory=list)

    def console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning") or "Content Security Policy" in message.text:
            self.messages.append(f"console {message.type}: {message.text}")

    def page_error(self, error: Exception) -> None:
        self.messages.append(f"pageerror: {error}")


@dataclass
class Browser:
    page: Page
    problems: Problems
    base_url: str

    def goto(self, path: str) -> None:
        self.page.goto(self.base_url + path)

    def sign_in(self, username: str, path: str = "/console/memory/") -> None:
        self.goto(path)
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(PASSWORD)
        with self.page.expect_navigation():
            self.page.get_by_role("button", name="Sign in").click()

    def assert_clean(self) -> None:
        assert self.problems.messages == [], self.problems.messages

    def screenshot(self, name: str, *, full_page: bool = True) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        width = self.page.viewport_size["width"] if self.page.viewport_size else 0
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=full_page)


@pytest.fixture
def browser_for(live_server) -> Iterator[Callable[..., Browser]]:
    """Open a Chromium page on the live server (width 1280 unless asked), watching for problems.

    Playwright starts at the first page opened, so a test makes its users and realms first (see
    ``user_with_password``).
    """
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium (/usr/bin/chromium) is not installed; the browser journeys need it")
    from playwright.sync_api import sync_playwright

    started = []

    def open_page(*, width: int = 1280, height: int = 900, color_scheme: str = "light") -> Browser:
        if not started:
            playwright = sync_playwright().start()
            started.append(playwright)
            started.append(playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS))
        context = started[1].new_context(viewport={"width": width, "height": height}, color_scheme=color_scheme)
        page = context.new_page()
        problems = Problems()
        page.on("console", problems.console)
        page.on("pageerror", problems.page_error)
        return Browser(page, problems, live_server.url)

    yield open_page
    if started:
        started[1].close()
        started[0].stop()
