"""One caller on every surface (docs/audit-and-oidc.md §5): the groups an identity provider vouches
for decide the Records page, the RPC, the event stream and both sockets alike, for a JWT bearer and
for a browser session begun through the issuer. Each surface is asked the same question: does this
caller see identity:ana's memory (a record's title, or the event about her record)?"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.test import AsyncClient, Client

from memory_panel.simulator.store_writer import identity_scope
from mobkit_console.asgi import console_application
from tests.support.oidc import sign_in_through_provider
from tests.support.rpc import PANEL, RPC
from tests.support.sockets import envelope, ingest, receive_events
from tests.support.sse import SseReader, open_stream

pytestmark = pytest.mark.django_db(transaction=True)

ANA_TITLE = "Ana keeps the Lisbon gate code"
LUKA_TITLE = "Luka walks the night shift"
SURFACES = ("page", "rpc", "sse", "events_socket", "timeline_socket")


def _remembered(identity: str, record_id: str) -> dict:
    return envelope(identity, "memory.record.remembered", identity=identity, record_id=record_id,
                    scope_kind="identity", scope_key=identity)


@pytest.fixture
def gated(realm_writer, posture, oidc_issuer, settings, ingest_token):
    settings.MOBKIT_OIDC_GROUPS_CLAIM = "groups"
    posture("idp_group_gates")
    writer = realm_writer("default")
    writer.remember(identity_scope("default", "identity:ana"), ANA_TITLE, "Four digits, changed monthly.")
    writer.remember(identity_scope("default", "identity:luka"), LUKA_TITLE, "From ten to six.")
    return oidc_issuer


class Caller:
    """How a test presents itself: a bearer JWT, or the cookie of a browser session."""

    def __init__(self, *, token: str | None = None, session: Client | None = None) -> None:
        self.token = token
        self.session = session

    def client(self) -> AsyncClient:
        client = AsyncClient()
        if self.session is not None:
            client.cookies = self.session.cookies
        return client

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def socket(self, path: str) -> WebsocketCommunicator:
        query = "after=console-evt-0" + (f"&auth_token={self.token}" if self.token else "")
        headers = []
        if self.session is not None:
            cookie = self.session.cookies[django_settings.SESSION_COOKIE_NAME].value
            headers = [(b"cookie", f"{django_settings.SESSION_COOKIE_NAME}={cookie}".encode()),
                       (b"host", b"testserver"), (b"origin", b"http://testserver")]
        communicator = WebsocketCommunicator(console_application, f"{path}?{query}", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        return communicator


async def what_each_surface_shows(caller: Caller) -> dict[str, set[str]]:
    """Which of ana and luka each surface shows this caller: an event about each is in the log
    before the streams open (replayed) and one more arrives while they are open (live)."""
    _, before = await ingest([_remembered("identity:ana", "mem-ana-1"), _remembered("identity:luka", "mem-luka-1")])
    client = caller.client()
    page = (await client.get("/console/memory/records/", headers=caller.headers())).content.decode()
    rpc = await client.post(RPC, {"jsonrpc": "2.0", "id": 1, "method": PANEL + "records", "params": {}},
                            content_type="application/json", headers=caller.headers())
    rpc_titles = {row["title"] for row in rpc.json()["result"]["records"]}

    stream = await open_stream(token=caller.token, query="after=console-evt-0", client=client)
    assert stream.status_code == 200
    sse = SseReader(stream.streaming_content)
    events_socket = await caller.socket("/ws/console/events/")
    timeline_socket = await caller.socket("/ws/console/timeline/")
    _, during = await ingest([_remembered("identity:ana", "mem-ana-2"), _remembered("identity:luka", "mem-luka-2")])

    ids = {"ana": {before["event_ids"][0], during["event_ids"][0]},
           "luka": {before["event_ids"][1], during["event_ids"][1]}}
    sse_ids = {event["id"] for event in await sse.events()}
    socket_ids = {frame["event"]["event_id"] for frame in await receive_events(events_socket)}
    timeline_html = ""
    while not await timeline_socket.receive_nothing(timeout=0.4):
        timeline_html += await timeline_socket.receive_from()
    await sse.close()
    await events_socket.disconnect()
    await timeline_socket.disconnect()

    def streamed(received: set[str]) -> set[str]:
        # Both of a name's events (the replayed and the live one), or neither: anything else shows.
        return {name if wanted <= received else f"{name}, partly" for name, wanted in ids.items() if wanted & received}

    return {
        "page": {name for name, title in (("ana", ANA_TITLE), ("luka", LUKA_TITLE)) if title in page},
        "rpc": {name for name, title in (("ana", ANA_TITLE), ("luka", LUKA_TITLE)) if title in rpc_titles},
        "sse": streamed(sse_ids),
        "events_socket": streamed(socket_ids),
        "timeline_socket": streamed({i for i in ids["ana"] | ids["luka"] if f'id="{i}"' in timeline_html}),
    }


@pytest.mark.parametrize(("subject", "groups", "sees"), [
    pytest.param("carol@example.test", None, {"ana", "luka"}, id="reader-without-groups"),
    pytest.param("carol@example.test", ["denied-ana"], {"luka"}, id="a-vouched-group-denies"),
    pytest.param("dan@example.test", None, set(), id="nobody-without-groups"),
    pytest.param("dan@example.test", ["ana-readers"], {"ana"}, id="a-vouched-group-allows"),
])
async def test_a_jwt_callers_groups_decide_every_surface_alike(gated, subject, groups, sees):
    claims = {"email": subject, **({"groups": groups} if groups is not None else {})}
    shown = await what_each_surface_shows(Caller(token=gated.mint(**claims)))
    assert shown == dict.fromkeys(SURFACES, sees)


@pytest.mark.parametrize(("subject", "groups", "sees"), [
    pytest.param("carol@example.test", ["denied-ana"], {"luka"}, id="a-vouched-group-denies"),
    pytest.param("dan@example.test", ["ana-readers"], {"ana"}, id="a-vouched-group-allows"),
])
async def test_a_browser_session_keeps_its_vouched_groups_on_every_surface(gated, subject, groups, sees):
    gated.users["person"] = {"sub": "u-person", "email": subject, "groups": groups}

    @database_sync_to_async
    def signed_in_session() -> Client:
        session = Client()
        sign_in_through_provider(session, "person", "/console/memory/records/")
        return session

    shown = await what_each_surface_shows(Caller(session=await signed_in_session()))
    assert shown == dict.fromkeys(SURFACES, sees)
