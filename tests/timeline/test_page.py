"""GET /console/timeline/: sign-in required, newest first, filters, warnings, record links."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from mobkit_console.timeline.ingest import IncomingEvent
from mobkit_console.timeline.services import events_store

pytestmark = pytest.mark.django_db


def _store(identity: str, event_type: str, **data) -> str:
    row = events_store(events=[IncomingEvent(None, identity, event_type, 1_700_000_000_000,
                                             {"realm": "default", **data}, None)])[0]
    return row.event_id


@pytest.fixture
def reader() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("reader", email="reader@example.test"))
    return client


def test_timeline_page_requires_sign_in():
    response = Client().get("/console/timeline/")
    assert response.status_code == 302
    assert response["Location"].startswith("/console/login/")


def test_timeline_page_lists_newest_first_with_warning_and_record_link(reader):
    first = _store("identity:luka", "memory.record.remembered", record_id="mem-1", scope_kind="identity",
                   scope_key="identity:luka")
    second = _store("_system", "memory.write.quarantined", author='Agent { identity: "identity:luka" }',
                    reason="llm_writes=quarantined policy")

    html = reader.get("/console/timeline/").content.decode()

    assert html.index(f'id="{second}"') < html.index(f'id="{first}"')
    assert 'class="timeline-event timeline-event--warning" data-event-type="memory.write.quarantined"' in html
    assert 'href="/console/memory/records/mem-1/?realm=default"' in html
    assert f'ws-connect="/ws/console/timeline/?after={second}"' in html
    assert "<script>" not in html and "style=" not in html  # CSP: nothing inline


def test_timeline_page_filters_by_type_and_identity_and_carries_them_to_the_socket(reader):
    dream = _store("_system", "memory.dream.started", run_id="dream-1")
    luka = _store("identity:luka", "memory.harvest.completed")
    _store("identity:mira", "memory.harvest.completed")

    by_type = reader.get("/console/timeline/", {"event_type": "memory.dream.started"}).content.decode()
    by_identity = reader.get("/console/timeline/", {"identity": "identity:luka"}).content.decode()

    assert dream in by_type and luka not in by_type
    assert "event_type=memory.dream.started" in by_type
    assert luka in by_identity and dream not in by_identity and "identity%3Amira" not in by_identity


def test_empty_timeline_connects_from_the_start_of_the_log(reader):
    html = reader.get("/console/timeline/").content.decode()
    assert 'ws-connect="/ws/console/timeline/?after=console-evt-0"' in html
    assert "No events yet" in html
    assert "No events match these filters" not in html
