"""Pages name records by title, the id beside it, and only records the caller may read (docs/daily-use.md §7)."""

from __future__ import annotations

import re

import pytest
from django.utils.html import escape

from memory_panel.selectors.named_records import record_titles
from mobkit_console.timeline.ingest import IncomingEvent
from mobkit_console.timeline.services import events_store
from access.caller import Caller, access_for
from tests.support.postures import READER, REVIEWER, SCOUT_READER
from tests.support.sockets import INGEST_TOKEN, envelope, ingest, open_socket, token_for
from tests.support.worlds import RETIRED_SUCCESSOR_TITLE, write_retired_successor

OPS_CHECKLIST = "Ops checklist"  # the panel realm's dream-created mob record (tests/support/worlds.py)
SEAT_V3 = "Prefers aisle, window on long-haul"


def _titled_link(title: str, memory_id: str) -> str:
    return (f'<a class="record-ref" href="/console/memory/records/{memory_id}/?realm=default" title="{memory_id}"'
            f' data-memory-id="{memory_id}">{escape(title)}</a>')


def _bare_link(memory_id: str) -> str:
    return f'<a class="record-ref mono small" href="/console/memory/records/{memory_id}/?realm=default">{memory_id}</a>'


def _named(page: str, title: str, memory_id: str) -> bool:
    return _titled_link(title, memory_id) in page


def test_record_titles_answers_only_for_records_the_caller_may_read(realm, posture, realm_aliases_allowed):
    posture("standard")
    refs = [("default", realm.ids["dream_created"]), ("default", realm.ids["seat_v3"]), ("default", "mem-gone"),
            ("no-such-realm", "mem-1")]

    assert record_titles(access=access_for(Caller(subject=READER)), refs=refs) == {
        ("default", realm.ids["dream_created"]): OPS_CHECKLIST, ("default", realm.ids["seat_v3"]): SEAT_V3,
    }
    # Reads identity:luka alone: the mob record stays an id.
    assert record_titles(access=access_for(Caller(subject=SCOUT_READER)), refs=refs) == {
        ("default", realm.ids["seat_v3"]): SEAT_V3,
    }


def test_dreams_name_touched_records_by_title(client_for, realm):
    page = client_for().get("/console/memory/dreams/").content.decode()

    assert _named(page, OPS_CHECKLIST, realm.ids["dream_created"])


def test_dreams_name_each_run_by_its_start_and_keep_its_id_inside(client_for, realm):
    page = client_for().get("/console/memory/dreams/").content.decode()
    summary = page.split('<summary>', 1)[1].split('</summary>', 1)[0]

    assert re.search(r'<h2 class="dream-card__name"><span class="run-name" title="run [^"]+">Dream of \d{4}-\d\d-\d\d \d\d:\d\d UTC</span></h2>', summary)
    run_id = re.search(r'title="run ([^"]+)"', summary).group(1)
    assert run_id not in re.sub(r"<[^>]+>", "", summary)
    assert f'<dt>Run</dt><dd class="mono small">{run_id}</dd>' in page


def test_quarantine_names_the_record_a_claimant_would_supersede(client_for, realm, posture):
    posture("standard")
    page = client_for(REVIEWER).get("/console/memory/quarantine/").content.decode()

    assert "claims to supersede " in page and _named(page, SEAT_V3, realm.ids["seat_v3"])


def test_pipeline_review_queue_names_its_records(client_for, demo_realms):
    page = client_for().get("/console/memory/pipeline/").content.decode()
    queue = page.split("Review queue", 1)[1]

    assert 'class="record-ref"' in queue and 'class="record-ref mono small"' not in queue


def test_holdings_tile_evidence_names_its_records(client_for, demo_realms):
    page = client_for().get("/console/memory/").content.decode()
    evidence = page.split('class="tile__evidence', 1)[1].split("</ul>", 1)[0]

    # docs/daily-use.md §7: the title is the link; its id is in the tooltip, not a second line.
    assert 'class="record-ref"' in evidence and "mem-" not in re.sub(r'<a [^>]*>', "", evidence)


def _store_remembered(record_id: str, scope_key: str) -> None:
    events_store(events=[IncomingEvent(None, "_system", "memory.record.remembered", 1_700_000_000_000,
                                       {"realm": "default", "record_id": record_id, "scope_kind": "mob",
                                        "scope_key": scope_key}, None)])


def test_timeline_names_a_record_by_title_only_for_a_caller_who_may_read_it(client_for, realm, posture):
    posture("standard")
    _store_remembered(realm.ids["dream_created"], "ops")

    assert _named(client_for(READER).get("/console/timeline/").content.decode(), OPS_CHECKLIST,
                  realm.ids["dream_created"])


@pytest.mark.django_db(transaction=True)
async def test_live_timeline_fragment_names_the_record_as_the_first_render_does(settings, realm,
                                                                                realm_aliases_allowed):
    settings.MOBKIT_INGEST_TOKEN = INGEST_TOKEN
    socket = await open_socket("/ws/console/timeline/", token=await token_for("admin@example.test"))

    await ingest(envelope("_system", "memory.record.remembered", record_id=realm.ids["dream_created"],
                          scope_kind="mob", scope_key="ops"))

    html = await socket.receive_from(timeout=2)
    assert _named(html, OPS_CHECKLIST, realm.ids["dream_created"])
    await socket.disconnect()


def test_a_realm_that_cannot_be_read_leaves_its_records_as_ids(client_for, agent_memory_dir, posture):
    (agent_memory_dir / "broken.sqlite3").write_bytes(b"not a database" * 100)
    events_store(events=[IncomingEvent(None, "_system", "memory.quarantine.verdict", 1_700_000_000_000,
                                       {"realm": "broken", "record_id": "mem-7", "verdict": "release"}, None)])

    response = client_for().get("/console/timeline/")

    assert response.status_code == 200
    assert '<a class="record-ref mono small" href="/console/memory/records/mem-7/?realm=broken">mem-7</a>' in (
        response.content.decode())



def _biography(client, memory_id: str, **params) -> str:
    return client.get(f"/console/memory/records/{memory_id}/", {"realm": "default", **params}).content.decode()


def _born(page: str) -> str:
    return page.split('id="born-heading"', 1)[1].split("</section>", 1)[0]


def test_a_biography_names_its_successor_prior_sources_and_compared_versions_by_title(client_for, realm):
    client = client_for()
    v1 = _biography(client, realm.ids["seat_v1"])
    v3 = _biography(client, realm.ids["seat_v3"], diff=realm.ids["seat_v3"])
    aisle = _titled_link("Prefers aisle seats", realm.ids["seat_v2"])

    assert f"Superseded by {aisle}." in v1
    assert f"<dt>Supersedes</dt><dd>{aisle}</dd>" in _born(v3)
    assert re.search(r'Derived from</h3>\s*<ul><li><a class="record-ref" href="[^"]+" title="mem-[^"]+" data-memory-id="[^"]+">Ops gotcha 0</a></li>',
                     _born(v3))
    compared = v3.split('id="diff-heading"', 1)[1].split("</p>", 1)[0]  # What changed: from v2 to v3
    assert f"From {aisle}" in compared and _titled_link(SEAT_V3, realm.ids["seat_v3"]) in compared
    assert 'class="record-ref mono small"' not in v1 + v3


def test_a_biography_leaves_a_source_the_caller_may_not_read_as_its_id(client_for, realm, posture):
    posture("standard")
    v3 = _biography(client_for(SCOUT_READER), realm.ids["seat_v3"])  # reads identity:luka, not mob ops

    assert _named(_born(v3), "Prefers aisle seats", realm.ids["seat_v2"])
    assert "Ops gotcha 0" not in v3
    assert re.search(r'Derived from</h3>\s*<ul><li><a class="record-ref mono small" href="[^"]+">mem-[^<]+</a></li>', v3)


def test_a_successor_only_reviewers_may_read_stays_an_id_for_everyone_else(client_for, realm_writer, posture):
    posture("standard")
    prior, successor = write_retired_successor(realm_writer("default"))

    as_reader = _biography(client_for(READER), prior)
    assert f"Superseded by {_bare_link(successor)}." in as_reader
    assert RETIRED_SUCCESSOR_TITLE not in as_reader
    # The lineage does not pretend the record stands alone when only its chain is hidden.
    assert "its other records are not yours to read" in as_reader and "No supersede chain" not in as_reader
    as_reviewer = _biography(client_for(REVIEWER), prior)
    assert f"Superseded by {_titled_link(RETIRED_SUCCESSOR_TITLE, successor)}." in as_reviewer
    assert "not yours to read" not in as_reviewer
