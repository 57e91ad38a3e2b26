"""An open timeline page reconnects by itself after ``bin/serve`` is stopped with SIGTERM and started
again: uvicorn closes its socket with 1012 (service restart), one of the codes the page's WebSocket
extension reconnects on; with 1000 or 1001 the page would stay offline (docs/serving.md §7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.servers import deployment_env, manage, post_events, session_cookie, start_serve, stop_serve

CHROMIUM = Path("/usr/bin/chromium")
PASSWORD = "restart-journey-pw"

pytestmark = pytest.mark.browser


def test_the_open_timeline_is_live_again_after_a_sigterm_restart(tmp_path: Path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium (/usr/bin/chromium) is not installed; the browser test needs it")
    from playwright.sync_api import expect, sync_playwright

    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    (state / "agent-memory").mkdir()
    env = deployment_env(state)
    manage(env, "migrate", "--noinput")
    manage(env, "shell", "-c", "from django.contrib.auth import get_user_model; "
           f"get_user_model().objects.create_user('ana', email='ana@example.test', password='{PASSWORD}')")
    server = start_serve(env, 1)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                 args=["--no-sandbox", "--disable-gpu"])
            try:
                context = browser.new_context()
                cookie = session_cookie(server.port, "ana", PASSWORD).partition("=")[2]
                context.add_cookies([{"name": "sessionid", "value": cookie, "url": server.http}])
                page = context.new_page()
                page.goto(f"{server.http}/console/timeline/")
                indicator = page.locator("#timeline-connection")
                expect(indicator).to_have_attribute("data-state", "live")

                port = server.port
                stop_serve(server)  # SIGTERM to its process group
                expect(indicator).not_to_have_attribute("data-state", "live", timeout=10_000)
                server = start_serve(env, 1, port)
                expect(indicator).to_have_attribute("data-state", "live", timeout=60_000)

                post_events(server, {"identity": "_system", "event_type": "memory.dream.started",
                                     "timestamp_ms": 1_700_000_000_000, "data": {"realm": "default", "run_id": "after"}},
                            env["MOBKIT_INGEST_TOKEN"])
                expect(page.locator('#timeline-events > li[data-event-type="memory.dream.started"]')).to_have_count(
                    1, timeout=10_000)
            finally:
                browser.close()
    finally:
        stop_serve(server)
