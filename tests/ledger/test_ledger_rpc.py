"""mobkit/memory/query, /stores and /index over real state files, through POST /console/rpc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.files import assertion, conflict, write_state
from tests.support.postures import SCOUT_ONLY

STORES = ["knowledge_graph", "vector", "timeline", "todo", "top_of_mind"]


LEDGER = {
    "assertions": [
        assertion(0, "alice", "travel", "knowledge_graph", "Alice flies to Paris on Monday", {"src": "chat"}),
        assertion(1, "alice", "diet", "vector", "Vegetarian since 2019"),
        assertion(2, "bob", "travel", "timeline", "Bob stays in BERLIN"),
        assertion(3, "bob", "paris-trip", "knowledge_graph", "Booked the hotel"),
    ],
    "conflicts": [
        conflict("bob", "travel", "timeline", "Two cities claimed"),
        conflict("alice", "travel", "vector", None),
    ],
}


@pytest.fixture
def ledger(state_dir: Path) -> Path:
    path = state_dir / "memory-ledger-state.json"
    write_state(path, LEDGER)
    return path


def ids(result: dict) -> tuple[list[str], list[tuple[str, str, str]]]:
    return (
        [row["assertion_id"][-1] for row in result["assertions"]],
        [(row["entity"], row["topic"], row["store"]) for row in result["conflicts"]],
    )


@pytest.mark.parametrize(
    ("params", "assertion_ids", "conflict_keys"),
    [
        (None, ["0", "1", "2", "3"], [("alice", "travel", "vector"), ("bob", "travel", "timeline")]),
        ({}, ["0", "1", "2", "3"], [("alice", "travel", "vector"), ("bob", "travel", "timeline")]),
        # entity/topic are trimmed and ASCII-lowercased; empty means no filter (docs/runtime-surfaces.md §1.3)
        ({"entity": "  ALICE "}, ["0", "1"], [("alice", "travel", "vector")]),
        ({"entity": ""}, ["0", "1", "2", "3"], [("alice", "travel", "vector"), ("bob", "travel", "timeline")]),
        ({"topic": "Travel"}, ["0", "2"], [("alice", "travel", "vector"), ("bob", "travel", "timeline")]),
        ({"store": " Vector "}, ["1"], [("alice", "travel", "vector")]),
        ({"entity": "alice", "topic": "travel", "store": "knowledge_graph"}, ["0"], []),
        # query: substring of entity, topic, or the lowercased fact / reason
        ({"query": "PARIS"}, ["0", "3"], []),
        ({"query": "berlin"}, ["2"], []),
        ({"query": "cities"}, [], [("bob", "travel", "timeline")]),
        ({"query": "ali"}, ["0", "1"], [("alice", "travel", "vector")]),
        ({"query": "   "}, ["0", "1", "2", "3"], [("alice", "travel", "vector"), ("bob", "travel", "timeline")]),
        # the substring applies after the exact filters
        ({"entity": "bob", "query": "paris"}, ["3"], []),
        ({"store": "todo"}, [], []),
    ],
)
def test_query_filters(rpc, ledger, params, assertion_ids, conflict_keys):
    reply = rpc("mobkit/memory/query", params)
    assert "error" not in reply
    assert ids(reply["result"]) == (assertion_ids, conflict_keys)


def test_query_returns_mobkit_record_shapes(rpc, ledger):
    result = rpc("mobkit/memory/query", {"entity": "alice", "topic": "travel"})["result"]
    assert result == {
        "assertions": [LEDGER["assertions"][0]],
        "conflicts": [
            {"entity": "alice", "topic": "travel", "store": "vector", "reason": None,
             "updated_at_ms": 1_700_000_100_000}
        ],
    }


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([1, 2], "params must be a JSON object"),
        ("alice", "params must be a JSON object"),
        ({"entity": 5}, "entity filter must be a string"),
        ({"topic": True}, "topic filter must be a string"),
        ({"store": 3}, "store must be a non-empty string when provided"),
        ({"store": "  "}, "store must be a non-empty string when provided"),
        ({"store": "Graph"}, "store 'graph' is unsupported (allowed: knowledge_graph, vector, timeline, todo, top_of_mind)"),
        ({"query": 7}, "query filter must be a string"),
        # validation order: entity → topic → store → query
        ({"entity": 1, "topic": 2, "store": "nope"}, "entity filter must be a string"),
        ({"topic": 2, "store": "nope"}, "topic filter must be a string"),
        ({"store": "nope", "query": 1}, "store 'nope' is unsupported (allowed: knowledge_graph, vector, timeline, todo, top_of_mind)"),
    ],
)
def test_query_validation_messages(rpc, ledger, params, message):
    reply = rpc("mobkit/memory/query", params)
    assert reply["error"] == {"code": -32602, "message": f"Invalid params: {message}", "data": None}


def test_stores_count_assertions_plus_conflict_signals_in_fixed_order(rpc, ledger):
    reply = rpc("mobkit/memory/stores")
    assert reply["result"] == {
        "stores": [
            {"store": "knowledge_graph", "record_count": 2},  # assertions 0 and 3
            {"store": "vector", "record_count": 2},  # assertion 1 + the alice/travel conflict
            {"store": "timeline", "record_count": 2},  # assertion 2 + the bob/travel conflict
            {"store": "todo", "record_count": 0},
            {"store": "top_of_mind", "record_count": 0},
        ]
    }


def test_stores_rejects_non_object_params(rpc, ledger):
    assert rpc("mobkit/memory/stores", [1])["error"]["message"] == "Invalid params: params must be a JSON object"


def test_missing_state_file_is_an_empty_ledger(rpc, state_dir):
    assert rpc("mobkit/memory/query")["result"] == {"assertions": [], "conflicts": []}
    assert rpc("mobkit/memory/stores")["result"]["stores"] == [
        {"store": name, "record_count": 0} for name in STORES
    ]


def test_legacy_elephant_file_is_adopted_when_it_alone_exists(rpc, state_dir):
    write_state(state_dir / "elephant-memory-state.json", {"assertions": [LEDGER["assertions"][1]]})
    assert ids(rpc("mobkit/memory/query")["result"]) == (["1"], [])
    # once memory-ledger-state.json exists, it wins and the legacy file is ignored
    write_state(state_dir / "memory-ledger-state.json", {"conflicts": [LEDGER["conflicts"][0]]})
    assert ids(rpc("mobkit/memory/query")["result"]) == ([], [("bob", "travel", "timeline")])
    assert (state_dir / "elephant-memory-state.json").exists()  # adopted, never renamed


def test_state_file_is_reread_after_mobkit_replaces_it(rpc, ledger):
    assert len(rpc("mobkit/memory/query")["result"]["assertions"]) == 4
    write_state(ledger, {"assertions": LEDGER["assertions"][:1], "conflicts": []})
    assert ids(rpc("mobkit/memory/query")["result"]) == (["0"], [])


def test_load_normalizes_rows_and_drops_the_ones_mobkit_drops(rpc, state_dir):
    write_state(
        state_dir / "memory-ledger-state.json",
        {
            "assertions": [
                assertion(0, "  Alice ", "TRAVEL", " Vector ", "  padded fact  "),
                assertion(1, "carol", "x", "graph", "unsupported store: dropped"),
                assertion(2, "carol", "x", "todo", "   "),  # empty fact: dropped
                assertion(3, "   ", "x", "todo", "empty entity: dropped"),
            ],
            "conflicts": [
                conflict("zed", "b", "todo", "  "),
                conflict("Amy", "a", "todo", "first"),
                conflict("amy", "a", "TODO", "  second  "),  # same key: the later row wins
                conflict("amy", "a", "nowhere", "unsupported store: dropped"),
            ],
        },
    )
    result = rpc("mobkit/memory/query")["result"]
    assert [(a["entity"], a["topic"], a["store"], a["fact"]) for a in result["assertions"]] == [
        ("alice", "travel", "vector", "padded fact")
    ]
    assert [(c["entity"], c["reason"]) for c in result["conflicts"]] == [("amy", "second"), ("zed", None)]


def test_only_the_newest_4096_assertions_are_retained(rpc, state_dir):
    rows = [assertion(n, "e", "t", "todo", f"fact {n}") for n in range(4100)]
    write_state(state_dir / "memory-ledger-state.json", {"assertions": rows})
    result = rpc("mobkit/memory/query")["result"]["assertions"]
    assert len(result) == 4096
    assert result[0]["fact"] == "fact 4" and result[-1]["fact"] == "fact 4099"
    assert rpc("mobkit/memory/stores")["result"]["stores"][3] == {"store": "todo", "record_count": 4096}


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "the top level must be a JSON object"),
        ('{"assertions": {}}', "'assertions' must be an array"),
        ('{"assertions": [{"entity": "a"}]}', "assertions[0] is missing field 'assertion_id'"),
        (
            '{"conflicts": [{"entity": "a", "topic": "b", "store": "todo", "updated_at_ms": -1}]}',
            "conflicts[0] field 'updated_at_ms' must be an unsigned integer",
        ),
    ],
)
def test_corrupt_state_file_is_a_backend_unavailable_error(rpc, state_dir, content, detail):
    (state_dir / "memory-ledger-state.json").write_text(content, encoding="utf-8")
    for method in ("mobkit/memory/query", "mobkit/memory/stores"):
        error = rpc(method)["error"]
        # -32012: MEMORY_BACKEND_UNAVAILABLE_CODE of the current era (v0.4.13 used -32010)
        assert error["code"] == -32012
        assert error["message"].startswith(
            "Memory backend unavailable: invalid store data: memory-ledger-state.json: "
        )
        assert detail in error["message"]


def test_index_is_refused_read_only_and_not_advertised(rpc, ledger):
    for params in (None, {"entity": "a", "topic": "b", "fact": "c"}):
        assert rpc("mobkit/memory/index", params)["error"] == {
            "code": -32010, "message": "console is read-only", "data": {"kind": "read_only"},
        }
    methods = rpc("mobkit/capabilities")["result"]["methods"]
    assert "mobkit/memory/index" not in methods
    assert {"mobkit/memory/query", "mobkit/memory/stores", "mobkit/memory/panel/recall_preview"} <= set(methods)
    assert json.loads(ledger.read_text()) == LEDGER  # untouched


def test_scoped_reader_is_denied_the_ledger_and_not_shown_it(rpc, ledger, access_toml):
    access_toml(SCOUT_ONLY)
    for method in ("mobkit/memory/query", "mobkit/memory/stores"):
        assert rpc(method)["error"] == {
            "code": -32030,
            "message": "access denied: agent.memory.read",
            "data": {"kind": "access_denied", "action": "agent.memory.read", "resource": None},
        }
    methods = rpc("mobkit/capabilities")["result"]["methods"]
    assert "mobkit/memory/query" not in methods and "mobkit/memory/stores" not in methods
    assert "mobkit/memory/panel/recall_preview" in methods


def test_unreadable_state_file_is_an_io_error(rpc, state_dir):
    (state_dir / "memory-ledger-state.json").mkdir()  # exists, but reading it fails
    error = rpc("mobkit/memory/query")["error"]
    assert error["code"] == -32012
    assert error["message"].startswith("Memory backend unavailable: I/O error: memory-ledger-state.json: ")
