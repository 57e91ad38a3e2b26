"""GET /console/memory/records/<memory_id>/: the biography (body, lineage, born, life, dreams)."""

from __future__ import annotations

import html
import json
import re

import pytest

from tests.support.postures import READER, REVIEWER, SCOUT_READER
from tests.support.worlds import PANEL_QUARANTINED_BODY


@pytest.fixture
def client(client_for):
    return client_for()


def detail(client, memory_id: str, **params):
    return client.get(f"/console/memory/records/{memory_id}/", params)


def test_biography_shows_header_and_whitespace_preserving_body(client, realm):
    page = detail(client, realm.ids["seat_v1"], realm="default").content.decode()

    assert "<h1 id=\"record-title\">Prefers window seats</h1>" in page
    assert '<pre class="record-body">Window seats on short flights.\n  indented line\n\nlast line</pre>' in page
    assert "Seat preference" in page and ">superseded<" in page and "trust: agent observed" in page
    assert f'Superseded by <a class="record-ref" href="/console/memory/records/{realm.ids["seat_v2"]}/?realm=default"' in page


def test_copy_as_json_holds_the_record_wire_shape(client, realm):
    page = detail(client, realm.ids["seat_v3"]).content.decode()
    text = page.split('<pre id="record-json-text">', 1)[1].split("</pre>", 1)[0]
    record = json.loads(html.unescape(text))

    assert record["id"] == realm.ids["seat_v3"]
    assert record["body"] == "Aisle short, window long."
    assert record["status"] == {"status": "active"}
    assert 'data-copy-target="record-json-text"' in page
    assert '<script defer src="/static/memory_panel/js/memory_panel.js"></script>' in page


def test_lineage_runs_oldest_to_newest_and_marks_the_claimant(client, realm):
    page = detail(client, realm.ids["seat_v2"]).content.decode()
    lineage = page.split('<ol class="lineage">', 1)[1].split("</ol>", 1)[0]
    order = [realm.ids[key] for key in ("seat_v1", "seat_v2", "seat_v3", "claimant")]

    positions = [lineage.index(memory_id) for memory_id in order]
    assert positions == sorted(positions)
    assert f'href="/console/memory/records/{realm.ids["seat_v1"]}/?realm=default"' in lineage
    assert '<strong aria-current="true">Prefers aisle seats</strong>' in lineage  # the current node
    nodes = {memory_id: node for node in lineage.split("<li")[1:] for memory_id in order if memory_id in node}
    assert ">claimant<" in nodes[realm.ids["claimant"]]
    assert ">claimant<" not in nodes[realm.ids["seat_v3"]]


def test_born_shows_author_evidence_verification_and_derivation(client, realm):
    v1 = detail(client, realm.ids["seat_v1"]).content.decode()
    v3 = detail(client, realm.ids["seat_v3"]).content.decode()

    assert "agent identity:luka" in v1
    assert "<code>session-1</code>" in v1 and "<code>r1</code>" in v1
    assert "checked the booking history" in v1
    assert re.search(r'Derived from</h3>\s*<ul><li><a class="record-ref" href="/console/memory/records/mem-[^"]+" title="mem-[^"]+" data-memory-id="mem-[^"]+">Ops gotcha 0</a>', v3)
    assert f'<dt>Supersedes</dt><dd><a class="record-ref" href="/console/memory/records/{realm.ids["seat_v2"]}/?realm=default" title="{realm.ids["seat_v2"]}"' in v3


def test_life_shows_usage_and_the_injection_ledger(client, realm):
    page = detail(client, realm.ids["seat_v3"]).content.decode()
    life = page.split('id="life-heading"', 1)[1].split("</section>", 1)[0]

    assert "<dt>Injected</dt><dd>2" in life and "<dt>Judged useful</dt><dd>1" in life
    assert "<td>build</td><td>identity:luka</td><td class=\"mono small\">sess-42</td>" in life
    assert "<td>turn</td><td>identity:luka</td><td class=\"mono small\">—</td>" in life


def test_dreams_section_lists_steward_runs_that_touched_the_record(client, realm):
    page = detail(client, realm.ids["dream_created"]).content.decode()
    dreams = page.split('id="dreams-heading"', 1)[1].split("</section>", 1)[0]

    assert realm.ids["dream_run"] in dreams and "consolidated the ops gotchas" in dreams


def test_dreams_section_without_realm_history_grant_says_no_grant(client_for, realm, posture):
    posture("standard")
    page = detail(client_for(SCOUT_READER), realm.ids["seat_v3"]).content.decode()
    dreams = page.split('id="dreams-heading"', 1)[1].split("</section>", 1)[0]

    assert "Aisle short, window long." in page  # the record itself is readable
    assert "No grant." in dreams and "agent.memory.read" in dreams


def test_unknown_record_is_a_404_with_a_clear_message(client, realm):
    response = detail(client, "mem-does-not-exist")

    assert response.status_code == 404
    assert "unknown memory record &#x27;mem-does-not-exist&#x27;" in response.content.decode()


def test_unknown_realm_is_a_400(client, realm):
    response = detail(client, realm.ids["seat_v1"], realm="elsewhere")

    assert response.status_code == 400
    assert "unknown realm &#x27;elsewhere&#x27;" in response.content.decode()


def test_quarantined_record_is_denied_to_a_reader_without_review(client_for, realm, posture):
    posture("standard")
    response = detail(client_for(READER), realm.ids["quarantined"])
    page = response.content.decode()

    assert response.status_code == 403
    assert "No grant." in page and "memory.quarantine.review" in page
    assert PANEL_QUARANTINED_BODY not in page


def test_reviewer_reads_the_quarantined_body_and_reason(client_for, realm, posture):
    posture("standard")
    page = detail(client_for(REVIEWER), realm.ids["quarantined"]).content.decode()

    assert PANEL_QUARANTINED_BODY in page
    assert "Quarantined: session tainted by MCP server &#x27;scraper&#x27;" in page


def test_htmx_request_gets_the_biography_alone(client, realm):
    response = client.get(f"/console/memory/records/{realm.ids['seat_v1']}/", HTTP_HX_REQUEST="true")
    fragment = response.content.decode()

    assert fragment.lstrip().startswith('<article id="biography"')
    assert "<html" not in fragment
