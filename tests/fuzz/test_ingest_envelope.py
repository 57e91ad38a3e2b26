"""Fuzzing the ingest envelope: any body gets a 201 or a 4xx with a JSON body, and a refused batch
stores nothing (docs/timeline.md §T.7)."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobkit_console.timeline.events import EVENT_TYPES
from mobkit_console.timeline.models import TimelineEvent
from tests.fuzz.strategies import dumps, hostile_values, json_values
from tests.support.sockets import ingest_raw

pytestmark = pytest.mark.django_db(transaction=True)  # the async view closes old connections, as in tests/timeline

TOKEN = "fuzz-ingest-secret"


def field(valid: st.SearchStrategy) -> st.SearchStrategy:
    """Mostly a plausible value, often a hostile one."""
    return valid | hostile_values


envelopes = st.fixed_dictionaries(
    {
        "identity": field(st.sampled_from(["_system", "identity:scout"])),
        "event_type": field(st.sampled_from(sorted(EVENT_TYPES))),
        "timestamp_ms": field(st.integers(min_value=0, max_value=2**63 - 1)),
        "data": field(st.dictionaries(st.text(max_size=5), json_values, max_size=3)),
    },
    optional={"event_id": field(st.text(min_size=1, max_size=10)), "interaction_id": hostile_values},
)
bodies = envelopes | st.lists(envelopes, min_size=1, max_size=3) | hostile_values


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies)
def test_any_ingest_body_is_stored_whole_or_refused_whole_with_a_json_answer(ingest_settings, body):
    before = TimelineEvent.objects.count()
    status, answer = async_to_sync(ingest_raw)(dumps(body).encode("utf-8"), token=TOKEN)
    stored = TimelineEvent.objects.count() - before

    assert status in (201, 400, 413), answer
    if status == 201:
        assert len(answer["event_ids"]) == (len(body) if isinstance(body, list) else 1)
        assert 0 < stored <= len(answer["event_ids"])  # a repeated source event_id is stored once
    else:
        assert answer["error"] in ("invalid_event", "too_large") and isinstance(answer["message"], str)
        assert stored == 0


@pytest.fixture
def ingest_settings(settings):
    settings.MOBKIT_INGEST_TOKEN = TOKEN
