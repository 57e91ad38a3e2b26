"""Each of the 20 event types reads as a sentence, raw fields one click away (docs/timeline-live.md §7)."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client

from mobkit_console.timeline.events import EVENT_TYPES
from mobkit_console.timeline.sentences import event_sentence, type_words
from tests.support.sockets import INGEST_TOKEN, envelope, ingest, open_socket, token_for

pytestmark = pytest.mark.django_db(transaction=True)

LUKA_WRITE = 'Agent { identity: "identity:router" }'
SCOPE = {"scope_kind": "mob", "scope_key": "ops"}

# (event_type, identity, data) → the sentence; ``[record]`` marks where the record's title goes.
SENTENCES = [
    ("memory.dream.started", "_system", {"realm": "team:blue", "run_id": "dream-7"},
     "a dream on realm team:blue started"),
    ("memory.dream.completed", "_system", {"realm": "team:blue", "run_id": "dream-7", "ops_committed": 4, "detail": {}},
     "a dream on realm team:blue committed 4 ops"),
    ("memory.dream.skipped", "_system", {"realm": "default", "reason": "steward disabled"},
     "a dream on realm default was skipped: steward disabled"),
    ("memory.record.promoted", "_system", {"realm": "default", "record_id": "mem-2", "source_record_id": "mem-1",
                                           **SCOPE, "proposal_id": None, "gated": True},
     "[record] was promoted to mob ops once an operator approved the gate"),
    ("memory.record.promoted", "_system", {"realm": "default", "record_id": "prop-9", "source_record_id": None,
                                           **SCOPE, "proposal_id": "prop-9", "gated": False},
     "a dream accepted proposal prop-9 into mob ops"),
    ("memory.quarantine.verdict", "_system", {"realm": "default", "record_id": "mem-3", "verdict": "release"},
     "review released [record] from quarantine"),
    ("memory.quarantine.verdict", "_system", {"realm": "default", "record_id": "mem-3", "verdict": "tombstone"},
     "review tombstoned [record], which was in quarantine"),
    # docs/access.md §2.8: a caller who may not read the record is sent the event without its id.
    ("memory.quarantine.verdict", "_system", {"realm": "default", "record_id": None, "verdict": "release"},
     "review released a record from quarantine"),
    ("memory.quarantine.verdict", "_system", {"realm": "default", "record_id": "mem-3", "verdict": "open_loop_escalated"},
     "review decided [record]: open loop escalated"),
    ("memory.quarantine.release_blocked", "_system", {"realm": "default", "record_id": "mem-3", "verdict": "release",
                                                      "class": "api_key"},
     "releasing [record] was blocked: it holds a secret (api key)"),
    ("memory.conflict.signal", "_system", {"realm": "default", "entity": "expenses", "topic": "deadline",
                                           "reason": "two dates"},
     "a conflict about expenses (deadline) on realm default: two dates"),
    ("memory.write.quarantined", "_system", {"realm": "default", "author": LUKA_WRITE,
                                             "reason": "session tainted by web tool 'web_fetch'"},
     "a write by agent identity:router was quarantined: session tainted by web tool 'web_fetch'"),
    ("memory.write.quarantined", "_system", {"realm": "default", "author": LUKA_WRITE, "reason": "secret detected",
                                             "record_id": "mem-7"},
     "a write by agent identity:router was quarantined: [record] (secret detected)"),
    ("memory.write.quarantined", "_system", {"realm": "default", "author": LUKA_WRITE, "reason": "secret detected",
                                             "record_id": None},
     "a write by agent identity:router was quarantined: secret detected"),
    ("memory.taint.transition", "identity:luka", {"identity": None, "session_key": "s-1", "kind": "tainted",
                                                  "source": "web tool 'web_fetch'"},
     "identity:luka's session s-1 was tainted by web tool 'web_fetch'"),
    ("memory.taint.transition", "_system", {"identity": "identity:luka", "session_key": "s-1", "kind": "rotated_clean",
                                            "source": "session rotation away from tainted session"},
     "identity:luka's session s-1 rotated to a clean session"),
    ("memory.taint.transition", "_system", {"identity": None, "session_key": "s-2", "kind": "reset_boundary",
                                            "source": "reset() boundary"},
     "session s-2 reached a reset boundary"),
    ("memory.budget.denied", "_system", {"realm": "default", "stage": "assembly", "reason": "over 20 KB"},
     "the memory budget refused assembly on realm default: over 20 KB"),
    ("memory.promotion.pending_gate", "_system", {"realm": "default", "pending_id": "gate-1", "record_id": "mem-4",
                                                  **SCOPE},
     "[record] waits at the gate for promotion to mob ops"),
    ("memory.harvest.completed", "identity:mira", {"realm": "default", "identity": "identity:mira", "promoted": 1,
                                                   "tombstoned": 2},
     "the harvest for identity:mira promoted 1 record and tombstoned 2 records"),
    ("memory.distill.timed_out", "identity:mira", {"identity": "identity:mira", "session_key": "s-3",
                                                   "cause": "turn_end"},
     "distilling identity:mira's session s-3 timed out: turn end"),
    ("memory.hygiene.proposed", "identity:mira", {"identity": "identity:mira", "session_key": "s-3", "cause": "idle",
                                                  "ops": [{}, {}], "flagged_active_records": []},
     "hygiene for identity:mira proposed 2 ops (idle)"),
    ("memory.hygiene.applied", "identity:mira", {"identity": "identity:mira", "session_key": "s-3", "cause": "idle",
                                                 "parent_revision": 1, "revision": 2, "ops": 1,
                                                 "flagged_active_records": []},
     "hygiene for identity:mira applied 1 op (idle), now at revision 2"),
    ("memory.hygiene.blocked", "identity:mira", {"identity": "identity:mira", "session_key": "s-3", "cause": "idle",
                                                 "reason": "revision moved"},
     "hygiene for identity:mira was blocked: revision moved"),
    ("memory.hygiene.skipped", "identity:mira", {"identity": "identity:mira", "session_key": "s-3", "cause": "idle",
                                                 "reason": "nothing to do"},
     "hygiene for identity:mira was skipped: nothing to do"),
    ("memory.record.remembered", "identity:luka", {"realm": "default", "record_id": "mem-5", "scope_kind": "identity",
                                                   "scope_key": "identity:luka"},
     "identity:luka remembered [record]"),
    ("memory.record.updated", "identity:luka", {"realm": "default", "record_id": "mem-5", "scope_kind": "identity",
                                                "scope_key": "identity:luka"},
     "identity:luka updated [record]"),
    ("memory.record.forgotten", "_system", {"realm": "default", "record_id": "mem-6", **SCOPE},
     "[record] in mob ops was forgotten"),
]


def _said(event_type: str, identity: str, data: dict) -> str:
    sentence = event_sentence(event_type, identity, data)
    return sentence.before + ("[record]" if sentence.names_record else "") + sentence.after


@pytest.mark.parametrize(("event_type", "identity", "data", "expected"), SENTENCES,
                         ids=[f"{row[0]}-{n}" for n, row in enumerate(SENTENCES)])
def test_event_reads_as_a_sentence(event_type, identity, data, expected):
    assert _said(event_type, identity, data) == expected


def test_every_event_type_has_its_own_sentence():
    assert {row[0] for row in SENTENCES} == set(EVENT_TYPES)
    assert len(EVENT_TYPES) == 20


def test_the_type_filter_names_types_in_words():
    assert type_words("memory.quarantine.release_blocked") == "quarantine: release blocked"
    assert type_words("memory.record.remembered") == "record: remembered"


def test_a_record_event_without_a_realm_names_the_record_in_words():
    assert _said("memory.record.updated", "identity:luka", {"record_id": "mem-5"}) == "identity:luka updated record mem-5"


def test_odd_values_never_break_a_sentence():
    assert _said("memory.dream.completed", "_system", {"ops_committed": "many", "run_id": None}) == (
        "a dream on the realm committed some ops")
    assert _said("memory.record.updated", "identity:luka", {"record_id": 7}) == "identity:luka updated record 7"


def _page(subject: str = "reader") -> str:
    client = Client()
    client.force_login(get_user_model().objects.get_or_create(username=subject, email=f"{subject}@example.test")[0])
    return client.get("/console/timeline/").content.decode()


def _item(html: str, event_id: str) -> str:
    return re.search(rf'<li id="{event_id}".*?</li>', html, re.S).group(0)


async def test_live_row_is_the_first_render_row_with_sentence_raw_fields_and_both_times(settings):
    settings.MOBKIT_INGEST_TOKEN = INGEST_TOKEN
    socket = await open_socket("/ws/console/timeline/", token=await token_for("admin@example.test"))
    _, body = await ingest(envelope("_system", "memory.write.quarantined", author=LUKA_WRITE, gated=True,
                                    reason="session tainted by web tool 'web_fetch'"))
    event_id = body["event_ids"][0]
    live = _item(await socket.receive_from(timeout=2), event_id)
    await socket.disconnect()

    first = _item(await database_sync_to_async(_page)("admin"), event_id)

    assert live == first
    sentence = re.search(r'<p class="timeline-event__sentence">(.*?)</p>', first, re.S).group(1)
    assert sentence == "a write by agent identity:router was quarantined: session tainted by web tool &#x27;web_fetch&#x27;"
    assert '<details class="timeline-event__raw">' in first and "<dt>gated</dt><dd class=\"mono\">true</dd>" in first
    assert "Agent {" not in first.split("<details", 1)[0] and "True" not in first
    assert re.search(r"<time datetime=[^>]*>[^<]+ ago</time> <span class=\"timeline-event__exact\">2023-11-14 22:13 UTC</span>", first)
