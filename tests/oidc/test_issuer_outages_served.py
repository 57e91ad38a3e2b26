"""A slow issuer in a real deployment (docs/audit-and-oidc.md §4): daphne serving pages on its pool of
MOBKIT_HTTP_THREADS threads. Callers waiting for the issuer may not fill that pool, so a console
token is answered at once while the issuer's discovery document hangs."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.litestream import wait_for
from tests.support.oidc import AUDIENCE, LoopbackIssuer
from tests.support.servers import deployment_env, manage, start_daphne, stop_daphne

pytestmark = pytest.mark.django_db(transaction=True)

DISCOVERY = "/.well-known/openid-configuration"


def _timed_status(url: str, token: str) -> tuple[int, float]:
    started = time.monotonic()
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    return status, time.monotonic() - started


def test_callers_waiting_for_a_hanging_issuer_leave_the_pool_to_console_tokens(tmp_path):
    issuer = LoopbackIssuer().start()
    issuer.slow[DISCOVERY] = 8.0
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    env = deployment_env(
        state, MOBKIT_TIMELINE_FOLLOW_REALMS="0", MOBKIT_HTTP_THREADS="4",
        MOBKIT_OIDC_ISSUER=issuer.url, MOBKIT_OIDC_AUDIENCE=AUDIENCE,
    )
    manage(env, "migrate", "--noinput")
    console_token = manage(env, "mobkit_token", "robot@example.test").strip().splitlines()[-1]
    server = start_daphne(env)
    try:
        experience = f"{server.http}/console/experience"
        with ThreadPoolExecutor(16) as pool:
            jwt_callers = pool.map(lambda token: _timed_status(experience, token),
                                   [issuer.mint(email="ana@example.test") for _ in range(16)])
            wait_for(lambda: issuer.fetches[DISCOVERY], timeout_s=10, what="the console asking the issuer")
            time.sleep(0.5)  # every JWT caller has reached the console by now
            status, waited = _timed_status(experience, console_token)
            jwt_callers = list(jwt_callers)
    finally:
        stop_daphne(server)
        issuer.stop()
    assert status == 200 and waited < 1.0
    assert {status for status, _ in jwt_callers} == {503}
    assert issuer.fetches[DISCOVERY] == 1
