"""The socket origin rule (docs/wire-contract.md §C.1) over a real daphne: a page on another port of the same host cannot ride the cookie."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import websockets

from tests.support.servers import deployment_env, manage, start_daphne, stop_daphne

SESSION_FOR_NEW_USER = (
    "from django.contrib.auth.models import User; from django.test import Client; c = Client(); "
    "c.force_login(User.objects.create_user('browser-user')); print(c.cookies['sessionid'].value)"
)


@pytest.fixture
def served(tmp_path: Path):
    (tmp_path / "state" / "console").mkdir(parents=True)
    env = deployment_env(tmp_path / "state")
    manage(env, "migrate", "--noinput")
    session = manage(env, "shell", "-c", SESSION_FOR_NEW_USER).strip().splitlines()[-1]
    server = start_daphne(env)
    yield server, session
    stop_daphne(server)


async def close_code(url: str, *, origin: str, session: str) -> int | None:
    """4401 when the server closes an anonymous socket at once; None while a signed-in one stays open."""
    async with websockets.connect(url, origin=origin, additional_headers={"Cookie": f"sessionid={session}"},
                                  open_timeout=10) as socket:
        try:
            frame = json.loads(await asyncio.wait_for(socket.recv(), timeout=1.5))
        except asyncio.TimeoutError:
            return None
        except websockets.ConnectionClosed as closed:
            return closed.rcvd.code
        raise AssertionError(f"unexpected frame {frame}")


async def test_cookie_socket_opens_from_the_served_origin_only(served):
    server, session = served
    url = f"{server.ws}/ws/console/events/"
    assert await close_code(url, origin=server.http, session=session) is None
    for other in (f"http://127.0.0.1:{server.port + 1}", f"https://127.0.0.1:{server.port}", "http://localhost"):
        assert await close_code(url, origin=other, session=session) == 4401, other
