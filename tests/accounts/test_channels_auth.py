from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from mobkit_console.accounts.channels import TokenAuthMiddleware
from mobkit_console.accounts.tokens import token_issue, user_for_subject

pytestmark = pytest.mark.django_db(transaction=True)


class WhoAmI(AsyncJsonWebsocketConsumer):
    async def connect(self):
        await self.accept()
        user = self.scope["user"]
        await self.send_json({"user": user.get_username() if user.is_authenticated else None})


APP = TokenAuthMiddleware(WhoAmI.as_asgi())


async def who(path: str, headers: list[tuple[bytes, bytes]] | None = None) -> str | None:
    communicator = WebsocketCommunicator(APP, path, headers=headers or [])
    connected, _ = await communicator.connect()
    assert connected
    message = await communicator.receive_json_from()
    await communicator.disconnect()
    return message["user"]


@database_sync_to_async
def new_token(subject: str) -> str:
    return token_issue(user=user_for_subject(subject))


@database_sync_to_async
def session_cookie_for(username: str) -> bytes:
    client = Client()
    client.force_login(get_user_model().objects.create_user(username))
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode()


async def test_query_token_authenticates_websocket():
    token = await new_token("watcher@example.com")
    assert await who(f"/ws/console/events/?after=console-evt-1&auth_token={token}") == "watcher@example.com"


async def test_bearer_header_authenticates_websocket():
    token = await new_token("watcher@example.com")
    assert await who("/ws/console/events/", [(b"authorization", f"Bearer {token}".encode())]) == "watcher@example.com"


async def test_session_cookie_authenticates_websocket_from_the_consoles_own_pages():
    cookie = await session_cookie_for("browser-user")
    assert await who("/ws/console/timeline/", [(b"cookie", cookie), (b"origin", b"http://127.0.0.1:8000")]) == "browser-user"


@pytest.mark.parametrize("origin", [b"https://evil.example", b"http://localhost.evil.example:8000", None])
async def test_session_cookie_from_another_origin_is_anonymous(origin):
    cookie = await session_cookie_for("browser-user")
    headers = [(b"cookie", cookie)] + ([(b"origin", origin)] if origin else [])
    assert await who("/ws/console/timeline/", headers) is None


async def test_bad_token_is_anonymous_even_with_a_session():
    cookie = await session_cookie_for("browser-user")
    assert await who("/ws/console/events/?auth_token=mkc_wrong", [(b"cookie", cookie)]) is None


async def test_no_credentials_is_anonymous():
    assert await who("/ws/console/events/") is None
