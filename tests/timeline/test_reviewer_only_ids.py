"""The timeline names a reviewer-only record only to reviewers (docs/access.md §2.8): not its id, not
its title, on the page, the SSE stream or either socket, replayed or live."""

from __future__ import annotations

import asyncio
import re

import pytest
from channels.db import database_sync_to_async
from django.test import AsyncClient

from memory_panel.store.realms import forget_realm_connections
from mobkit_console.timeline.selectors import START_OF_LOG
from tests.support.realm_guard import allow_realm_aliases
from tests.support.postures import LUKA, READER, REVIEWER
from tests.support.sockets import BodyText, envelope, ingest, open_socket, received_text, token_for
from tests.support.worlds import ReviewerOnlyRecords, write_reviewer_only_records

pytestmark = pytest.mark.django_db(transaction=True)

# A realm no other test writes: an earlier test's realm connection left in Channels' database thread
# cannot stand in for it.
REALM = "reviewed"
LUKA_SCOPE = {"realm": REALM, "scope_kind": "identity", "scope_key": LUKA}


@pytest.fixture
async def realm_aliases_allowed(transactional_db, monkeypatch, django_db_blocker):
    allow_realm_aliases(monkeypatch, django_db_blocker)
    yield
    # The sockets read the realm in Channels' database thread, whose connections are its own: left
    # there, they would outlive this test's realm files for the next test's realm of the same name.
    await database_sync_to_async(forget_realm_connections)()


def _events(records: ReviewerOnlyRecords) -> list[dict]:
    """What the realm watcher reports of these records (docs/timeline.md §T.8), and a pushed
    release_blocked, which names no scope."""
    return [
        envelope("_system", "memory.write.quarantined", author='Agent { identity: "identity:luka" }',
                 reason="session tainted", record_id=records.quarantined, **LUKA_SCOPE),
        envelope("_system", "memory.quarantine.verdict", record_id=records.tombstoned, verdict="tombstone",
                 **LUKA_SCOPE),
        envelope("_system", "memory.quarantine.verdict", record_id=records.origin, verdict="release",
                 successor_id=records.released, **LUKA_SCOPE),
        envelope("_system", "memory.quarantine.release_blocked", record_id=records.quarantined, verdict="release",
                 realm=REALM, **{"class": "api_key"}),
    ]


def _names(text: str, memory_id: str) -> bool:
    # A release's successor is "<origin>-released": the origin's id is named only where it ends.
    return re.search(re.escape(memory_id) + r"(?![\w-])", text) is not None


async def _every_surface(subject: str, records: ReviewerOnlyRecords) -> dict[str, str]:
    """What ``subject`` is shown of the stored events and of the same events pushed live, per surface."""
    token = await token_for(subject)
    bearer = {"Authorization": f"Bearer {token}"}
    page = await AsyncClient().get("/console/timeline/", headers=bearer)
    assert page.status_code == 200
    sse = await AsyncClient().get(f"/console/events/stream?after={START_OF_LOG}", headers=bearer)
    sse_body = BodyText(sse.streaming_content)
    json_socket = await open_socket("/ws/console/events/", token=token, query=f"after={START_OF_LOG}")
    html_socket = await open_socket("/ws/console/timeline/", token=token, query=f"after={START_OF_LOG}")
    await asyncio.sleep(0.3)  # the replays are sent; what follows is live

    assert (await ingest(_events(records)))[0] == 201

    shown = {"json socket": await received_text(json_socket), "html socket": await received_text(html_socket)}
    shown["sse"] = await sse_body.close()
    shown["page"] = page.content.decode()
    for socket in (json_socket, html_socket):
        await socket.disconnect()
    return shown


async def test_a_reader_without_review_is_shown_no_id_of_a_reviewer_only_record(
        posture, realm_writer, ingest_token, realm_aliases_allowed):
    posture("standard")
    records = write_reviewer_only_records(realm_writer(REALM))
    assert (await ingest(_events(records)))[0] == 201  # on the page, and replayed

    for surface, text in (await _every_surface(READER, records)).items():
        assert [memory_id for memory_id in records.hidden if _names(text, memory_id)] == [], surface
        assert "Hotel rates leaked" not in text and "flight number" not in text, surface
        assert records.released in text, surface  # the released successor is ordinary memory
        assert text.count("memory.quarantine.verdict") >= 2, surface  # the events still arrive


async def test_a_reviewer_is_shown_every_id_the_events_name(posture, realm_writer, ingest_token,
                                                            realm_aliases_allowed):
    posture("standard")
    records = write_reviewer_only_records(realm_writer(REALM))
    assert (await ingest(_events(records)))[0] == 201

    shown = await _every_surface(REVIEWER, records)
    for surface, text in shown.items():
        assert all(_names(text, memory_id) for memory_id in records.hidden), surface
    # docs/daily-use.md §7: the quarantined write is named by its title where the caller may read it.
    for surface in ("page", "html socket"):
        assert "a write by agent identity:luka was quarantined: <a class=\"record-ref\"" in shown[surface], surface
        assert ">Hotel rates leaked on a forum</a> (session tainted)" in shown[surface], surface
