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
    client.force_login(get_user_model().objects.get_or_create(username=username)[0])
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode()


async def test_query_token_authenticates_websocket():
    token = await new_token("watcher@example.com")
    assert await who(f"/ws/console/events/?after=console-evt-1&auth_token={token}") == "watcher@example.com"


async def test_bearer_header_authenticates_websocket():
    token = await new_token("watcher@example.com")
    assert await who("/ws/console/events/", [(b"authorization", f"Bearer {token}".encode())]) == "watcher@example.com"


async def cookie_socket_user(origin: bytes | None, host: bytes = b"127.0.0.1:8000", *extra: tuple[bytes, bytes]):
    cookie = await session_cookie_for("browser-user")
    headers = [(b"cookie", cookie), (b"host", host), *extra] + ([(b"origin", origin)] if origin else [])
    return await who("/ws/console/timeline/", headers)


async def test_session_cookie_authenticates_websocket_from_the_consoles_own_pages():
    assert await cookie_socket_user(b"http://127.0.0.1:8000") == "browser-user"


@pytest.mark.parametrize(
    "origin",
    [
        b"https://evil.example",
        b"http://localhost.evil.example:8000",
        None,
        b"null",
        # docs/wire-contract.md §C.1: the same host on another port or scheme is another origin (another program).
        b"http://127.0.0.1:9999",
        b"https://127.0.0.1:8000",
        b"http://127.0.0.1",
        b"http://localhost:8000",
    ],
)
async def test_session_cookie_from_another_origin_is_anonymous(origin):
    assert await cookie_socket_user(origin) is None


async def test_default_ports_are_the_same_origin_and_scheme_still_counts():
    assert await cookie_socket_user(b"http://localhost", b"localhost") == "browser-user"
    assert await cookie_socket_user(b"http://localhost:80", b"localhost") == "browser-user"
    assert await cookie_socket_user(b"https://localhost", b"localhost") is None


async def test_a_host_outside_allowed_hosts_is_refused_even_with_a_matching_origin():
    # DNS rebinding: evil.example resolved to the console; its page matches its own Host header.
    assert await cookie_socket_user(b"http://evil.example:8000", b"evil.example:8000") is None


async def test_a_forwarded_scheme_from_a_client_is_ignored_unless_behind_a_proxy(settings):
    # Without MOBKIT_BEHIND_PROXY anyone can send the header: it must not change the served origin.
    settings.ALLOWED_HOSTS = ["console.example.com"]
    proxied = (b"x-forwarded-proto", b"https")
    assert await cookie_socket_user(b"https://console.example.com", b"console.example.com", proxied) is None
    assert await cookie_socket_user(b"http://console.example.com", b"console.example.com", proxied) == "browser-user"


async def test_behind_a_tls_proxy_the_forwarded_scheme_is_the_served_origin(settings):
    settings.ALLOWED_HOSTS = ["console.example.com"]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")  # MOBKIT_BEHIND_PROXY=1
    proxied = (b"x-forwarded-proto", b"https")
    assert await cookie_socket_user(b"https://console.example.com", b"console.example.com", proxied) == "browser-user"
    assert await cookie_socket_user(b"http://console.example.com", b"console.example.com", proxied) is None
    assert await cookie_socket_user(b"https://console.example.com", b"console.example.com") is None


async def test_configured_origins_replace_the_served_origin(settings):
    settings.MOBKIT_ALLOWED_ORIGINS = ["https://console.example.com", "http://127.0.0.1:9000"]
    assert await cookie_socket_user(b"https://console.example.com") == "browser-user"
    assert await cookie_socket_user(b"https://console.example.com:443") == "browser-user"
    assert await cookie_socket_user(b"http://127.0.0.1:9000") == "browser-user"
    assert await cookie_socket_user(b"http://127.0.0.1:8000") is None
    assert await cookie_socket_user(b"https://console.example.com:8443") is None


async def test_token_socket_works_from_any_origin():
    token = await new_token("watcher@example.com")
    headers = [(b"origin", b"https://evil.example"), (b"host", b"127.0.0.1:8000")]
    assert await who(f"/ws/console/events/?auth_token={token}", headers) == "watcher@example.com"


async def test_bad_token_is_anonymous_even_with_a_session():
    cookie = await session_cookie_for("browser-user")
    assert await who("/ws/console/events/?auth_token=mkc_wrong", [(b"cookie", cookie)]) is None


async def test_no_credentials_is_anonymous():
    assert await who("/ws/console/events/") is None
