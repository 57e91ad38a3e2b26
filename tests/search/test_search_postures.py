"""Search under MobKit's §2.6 postures: a caller never matches, counts or sees a snippet of a row it may not read.

The world is tests/support/worlds.py's; what each posture may see is tests/support/grants.py's
grant table, so search is judged by the same account of the rules as panel/records.
"""

from __future__ import annotations

import pytest

from memory_panel.search_text import parse_query
from memory_panel.selectors.counts import record_count
from memory_panel.store.record_filter import RecordFilter
from access.caller import access_for, caller_for_user
from tests.support.postures import CALLERS
from tests.support.rpc import denied, panel
from tests.support.worlds import CLAIMANT_BODY, QUARANTINED_BODY, RETIRED_BODY
from tests.support.grants import GRANTED_POSTURES as POSTURES, GRANTS
from tests.support.matching import matches

pytestmark = pytest.mark.django_db

STATUSES = ("active", "quarantined", "superseded", "tombstoned")
# One distinctive word of each reviewer-only body, and words many rows share.
PROBES = ("scraped", "funds", "tainted", "west", "released", "scout", "tea", "relay", "pager", "agents", "realm")


def expected(world, grants, query: str, status: str) -> set[str]:
    return {r.id for r in world.rows.values() if r.status_kind == status and grants.sees(r) and matches(r, *query.split())}


@pytest.mark.parametrize("name", POSTURES)
def test_matches_are_exactly_the_visible_rows_for_every_probe_and_status(client, world, posture, name):
    posture(name)
    grants = GRANTS[name]
    for probe in PROBES:
        for status in STATUSES:
            reply = panel(client, "search", {"query": probe, "status": status, "limit": 100})
            assert {r["id"] for r in reply.result["records"]} == expected(world, grants, probe, status), (probe, status)


@pytest.mark.parametrize("name", POSTURES)
def test_reviewer_only_text_never_reaches_a_caller_without_review(client, world, posture, name):
    posture(name)
    grants = GRANTS[name]
    raws = b""
    for probe in ("scraped page funds", '"west face"', "tainted note", "forgotten"):
        for status in STATUSES:
            raws += panel(client, "search", {"query": probe, "status": status}).raw
    for body in (QUARANTINED_BODY, CLAIMANT_BODY, RETIRED_BODY):
        row = next(r for r in world.rows.values() if r.body == body)
        marked_word = body.split()[0].encode()  # the body's distinctive first word, inside any snippet
        assert (marked_word in raws) == grants.sees(row), body
        assert (row.id.encode() in raws) == grants.sees(row), body


@pytest.mark.parametrize("name", POSTURES)
def test_counts_count_only_visible_rows(client, world, posture, name, django_user_model):
    posture(name)
    grants = GRANTS[name]
    access = access_for(caller_for_user(django_user_model.objects.get(username=CALLERS[name][1]), sign_in="session"))
    for probe in PROBES:
        for status in STATUSES:
            count = record_count(
                access=access, realm=None, query=parse_query(probe), filters=RecordFilter(status=status), cap=1000
            )
            assert count.value == len(expected(world, grants, probe, status)), (probe, status)


@pytest.mark.parametrize("name", POSTURES)
def test_entry_gates_match_panel_records(client, world, posture, name):
    posture(name)
    grants = GRANTS[name]
    for params, allowed, action, resource in (
        ({"scope": "mob"}, grants.mob, "mob.memory.read", None),
        ({"scope": "operator"}, grants.operator, "operator.memory.read", None),
        ({"identity": "identity:lead"}, grants.scope_ok("identity", "identity:lead"), "agent.memory.read", "identity:lead"),
    ):
        reply = panel(client, "search", {"query": "the", **params})
        if allowed:
            assert "records" in reply.result
        else:
            assert reply.error == denied(action, resource), params
