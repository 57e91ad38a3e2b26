"""memory_panel/wire/results.py: every serialiser, field for field and in key order, on rows the
selectors read from the RPC world (a store-writer realm).

The expected objects are the world's own account of what it wrote (tests/support/written.py and
the lists build_world keeps), never the console's serialisers (docs/wire-contract.md §1).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from memory_panel.selectors.biography import record_get
from memory_panel.selectors.dreams import dream_history, dream_runs, open_audit_verdicts
from memory_panel.selectors.holdings import scope_holdings
from memory_panel.selectors.injections import injection_log
from memory_panel.selectors.pending import pending_harvests, pending_proposals
from memory_panel.selectors.quarantine import quarantine_queue
from memory_panel.selectors.records import record_list
from memory_panel.store.record_filter import RecordFilter
from memory_panel.wire import results, rust_debug
from memory_panel.wire.params import LISTS_MAX_LIMIT, RECORDS_MAX_LIMIT
from access.caller import Access
from tests.support.written import TAINT, newest_first, overview_rows

pytestmark = pytest.mark.django_db

OPEN = Access(subject="ops@example.test", groups=frozenset(), enforced=False, is_admin=False)


def assert_same_in_order(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    """Equal values, and every object's keys in the same order (serde writes struct fields in order)."""
    assert got == want
    assert [list(item) for item in got] == [list(item) for item in want]


def test_record_json_list_rows_swap_the_body_for_its_utf8_length(world):
    page = record_list(access=OPEN, realm=None, filters=RecordFilter(), limit=RECORDS_MAX_LIMIT, cursor=None)
    got = [results.record_json(record, with_body=False) for record in page.records]
    assert_same_in_order(got, [row.list_row() for row in newest_first(world.rows.values())])
    assert world["tea"].list_row()["body_bytes"] > len(world["tea"].body)  # the em dash is 3 bytes


@pytest.mark.parametrize("name", ["tea", "route_v1", "route_v2", "claimant", "quarantined", "released", "retired",
                                  "forgotten", "dreamt", "other_scout", "realm", "operator"])
def test_record_json_full_record_carries_body_and_content_hash(world, name):
    written = world[name]
    record = record_get(access=OPEN, memory_id=written.id, realm=written.realm).record
    assert_same_in_order([results.record_json(record, with_body=True)], [written.full()])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("tea", lambda world: {"status": "active"}),
        ("route_v1", lambda world: {"status": "superseded", "by": world["route_v2"].id}),
        ("quarantined", lambda world: {"status": "quarantined", "reason": TAINT}),
        ("forgotten", lambda world: {"status": "tombstoned"}),
    ],
)
def test_status_json_names_the_successor_or_the_gate_reason(world, name, expected):
    written = world[name]
    record = record_get(access=OPEN, memory_id=written.id, realm=written.realm).record
    assert_same_in_order([results.status_json(record)], [expected(world)])


def test_record_json_lists_malformed_columns_last(world):
    record = record_get(access=OPEN, memory_id=world["tea"].id, realm="default").record
    out = results.record_json(replace(record, malformed=("tags", "usage_stats")), with_body=False)
    assert list(out)[-1] == "malformed_columns" and out["malformed_columns"] == ["tags", "usage_stats"]


def test_injection_json_panel_rows_carry_realm_and_a_null_session_key(world):
    rows, realms = injection_log(access=OPEN, realm=None, limit=LISTS_MAX_LIMIT)
    got = [results.injection_json(row, with_realm=True) for row in rows]
    assert_same_in_order(got, sorted(world.injections, key=lambda i: i["at_ms"], reverse=True))
    assert realms == world.realms


def test_injection_json_per_record_rows_drop_realm_and_a_null_session_key(world):
    tea = world["tea"]
    injections = record_get(access=OPEN, memory_id=tea.id, realm="default").injections
    want = [
        {key: value for key, value in injection.items() if key != "realm" and not (key == "session_key" and value is None)}
        for injection in world.injections
        if injection["record_id"] == tea.id
    ]
    got = [results.injection_json(row, with_realm=False) for row in injections]
    assert_same_in_order(sorted(got, key=lambda i: i["at_ms"]), want)
    assert ["session_key" in injection for injection in want] == [False, True]


def test_pending_promotion_json(world):
    queue = quarantine_queue(access=OPEN, realm=None, limit=LISTS_MAX_LIMIT)
    got = [results.pending_promotion_json(row) for row in queue.pending_promotions]
    assert_same_in_order(got, world.promotions)


def test_scope_holdings_json(world):
    rows, _ = scope_holdings(access=OPEN, realm=None)
    got = [results.scope_holdings_json(row) for row in rows]
    assert_same_in_order(got, overview_rows(list(world.rows.values())))


# (selector of a realm-history list, its serialiser, the World list holding the expected rows)
HISTORY_LISTS = [
    (dream_history, results.dream_summary_json, "dreams"),
    (pending_proposals, results.proposal_json, "proposals"),  # authors in Rust's Debug format
    (pending_harvests, results.harvest_json, "harvests"),
    (dream_runs, results.dream_run_json, "dream_runs"),
    (open_audit_verdicts, results.audit_verdict_json, "audit_verdicts"),
]


@pytest.mark.parametrize(("select", "serialise", "expected"), HISTORY_LISTS, ids=[s.__name__ for _, s, _ in HISTORY_LISTS])
def test_realm_history_rows_serialise_field_for_field(world, select, serialise, expected):
    rows, realms = select(access=OPEN, realm=None, limit=LISTS_MAX_LIMIT)
    assert_same_in_order([serialise(row) for row in rows], getattr(world, expected))
    assert realms == world.realms


@pytest.mark.parametrize(
    ("author", "debug"),
    [
        ({"author": "agent", "identity": "identity:scout"}, 'Agent { identity: "identity:scout" }'),
        ({"author": "application"}, "Application"),
        ({"author": "operator"}, "Operator"),
        ({"author": "steward", "run_id": "dream-run-1"}, 'Steward { run_id: "dream-run-1" }'),
        ({"author": "agent", "identity": 'say "hi"\\now'}, 'Agent { identity: "say \\"hi\\"\\\\now" }'),
        ({"author": "agent", "identity": "a", "session": 3}, 'Agent { identity: "a", session: 3 }'),
        ({"author": 3}, "Unknown"),
        ({"identity": "identity:scout"}, "Unknown"),
        ("agent", "Unknown"),
        (None, "Unknown"),
    ],
)
def test_author_debug_is_rusts_debug_format(author, debug):
    assert rust_debug.author_debug(author) == debug
