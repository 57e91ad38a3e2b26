"""Counts on the Records and Quarantine pages: the visible rows only, exact up to the cap, then "more than"."""

from __future__ import annotations

import pytest

from memory_panel.selectors.counts import Count, record_count
from memory_panel.simulator.store_writer import identity_scope
from memory_panel.templatetags.search_format import count_range
from memory_panel.store.record_filter import RecordFilter
from access.caller import access_for, caller_for_user
from tests.support.rpc import panel
from tests.support.written import new_scribe
from tests.support.grants import GRANTED_POSTURES as POSTURES, GRANTS

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", POSTURES)
@pytest.mark.parametrize("status", [None, "active", "quarantined", "tombstoned"])
def test_records_page_counts_exactly_the_rows_the_rpc_lists(client, world, posture, name, status):
    posture(name)
    params = {"status": status} if status else {}
    listed = panel(client, "records", {**params, "limit": 200}).result["records"]
    page = client.get("/console/memory/records/", params).content.decode()
    if listed:
        assert f"1–{len(listed)} of {len(listed)}" in page
    else:
        assert "No records" in page


@pytest.mark.parametrize("name", POSTURES)
def test_quarantine_page_counts_the_queue_for_reviewers(client, world, posture, name):
    posture(name)
    page = client.get("/console/memory/quarantine/").content.decode()
    if not GRANTS[name].review:
        assert "quarantined records, newest first" not in page
        return
    queue = panel(client, "quarantine", {}).result["records"]
    if queue:
        assert f"1–{len(queue)} of {len(queue)} quarantined records" in page


def test_past_the_cap_a_count_says_more_than(agent_memory_dir, signed_in, client):
    user = signed_in()
    s = new_scribe(agent_memory_dir, "default")
    for n in range(12):
        s.remember(identity_scope("default", "identity:x"), f"Row {n}", "counted row")
    s.writer.close()
    access = access_for(caller_for_user(user, sign_in="session"))
    exact = record_count(access=access, realm=None, filters=RecordFilter(), cap=12)
    over = record_count(access=access, realm=None, filters=RecordFilter(), cap=5)
    assert (exact.value, exact.capped) == (12, False)
    assert (over.value, over.capped) == (6, True)
    assert count_range(over, 1, 5) == "1–5 of more than 5"
    assert count_range(Count(1284, 10_000), 51, 100) == "51–100 of 1,284"
