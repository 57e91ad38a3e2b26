"""memory_panel/wire/params.py: limits, filters and realm names, each bad input → InvalidParams
naming the field (docs/wire-contract.md §1.2)."""

from __future__ import annotations

import pytest

from memory_panel.errors import InvalidParams, UnknownRealm
from memory_panel.store.records import MEMORY_KINDS, SCOPE_KINDS, STATUS_KINDS, TRUST_TIERS
from memory_panel.store.record_filter import RecordFilter
from memory_panel.wire.params import (
    LISTS_DEFAULT_LIMIT,
    LISTS_MAX_LIMIT,
    RECORDS_DEFAULT_LIMIT,
    RECORDS_MAX_LIMIT,
    param_str,
    parse_kind,
    parse_limit,
    parse_realm,
    parse_scope,
    parse_status,
    parse_trust,
    record_filter,
)
from tests.support.postures import SCOUT
from tests.support.worlds import write_notes


def test_the_limits_are_mobkits():
    assert (RECORDS_DEFAULT_LIMIT, RECORDS_MAX_LIMIT, LISTS_DEFAULT_LIMIT, LISTS_MAX_LIMIT) == (50, 200, 20, 100)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, 50),
        (0, 1),
        (1, 1),
        (7, 7),
        (200, 200),
        (201, 200),
        (2**64 - 1, 200),  # the largest u64 clamps
        (2**64, 50),  # past u64: not a u64, so the default
        (-1, 50),
        (True, 50),  # serde's as_u64 refuses a bool
        (False, 50),
        (7.0, 50),  # and a float, even a whole one
        ("7", 50),
        ([7], 50),
        ({"limit": 7}, 50),
    ],
)
def test_a_limit_is_a_u64_clamped_to_one_through_max_else_the_default(raw, expected):
    assert parse_limit(raw, default=RECORDS_DEFAULT_LIMIT, maximum=RECORDS_MAX_LIMIT) == expected


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, None),
        ({"name": None}, None),
        ({"name": ""}, None),
        ({"name": " \t\n"}, None),
        ({"name": "  x  "}, "x"),
        ({"name": "identity:scout"}, "identity:scout"),
    ],
)
def test_a_string_param_is_trimmed_and_blank_means_not_given(params, expected):
    assert param_str(params, "name") == expected


@pytest.mark.parametrize("value", [0, 1.5, True, [], {}, ["x"]])
def test_a_string_param_of_another_json_type_is_refused_by_name(value):
    with pytest.raises(InvalidParams) as raised:
        param_str({"name": value}, "name")
    assert raised.value.message == "Invalid params: name must be a string"


# (parser, field, the values it knows)
ENUM_PARSERS = [
    (parse_scope, "scope", SCOPE_KINDS),
    (parse_status, "status", STATUS_KINDS),
    (parse_kind, "kind", MEMORY_KINDS),
    (parse_trust, "trust", TRUST_TIERS),
]


def test_the_filter_vocabularies_are_mobkits():
    assert SCOPE_KINDS == ("identity", "mob", "operator", "realm")
    assert STATUS_KINDS == ("active", "quarantined", "superseded", "tombstoned")
    assert MEMORY_KINDS == ("preference", "fact", "gotcha", "procedure", "relationship", "open_loop", "reference")
    assert TRUST_TIERS == ("untrusted", "agent_observed", "agent_verified", "application", "operator")


@pytest.mark.parametrize(
    ("parse", "value"),
    [(parse, value) for parse, _, values in ENUM_PARSERS for value in values],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_every_known_filter_value_parses_to_itself_trimmed(parse, value):
    assert parse(value) == value
    assert parse(f"  {value} ") == value


@pytest.mark.parametrize(("parse", "field", "values"), ENUM_PARSERS, ids=lambda v: v if isinstance(v, str) else None)
@pytest.mark.parametrize("blank", [None, "", "   "])
def test_a_blank_filter_means_no_filter(parse, field, values, blank):
    assert parse(blank) is None


@pytest.mark.parametrize(
    ("parse", "raw", "message"),
    [
        (parse_scope, "team", "unknown scope 'team'"),
        (parse_scope, "Identity", "unknown scope 'Identity'"),  # case matters, as in MobKit
        (parse_scope, 3, "scope must be a string"),
        (parse_status, "deleted", "unknown status 'deleted'"),
        (parse_status, ["active"], "status must be a string"),
        (parse_kind, "note", "unknown kind 'note'"),
        (parse_kind, False, "kind must be a string"),
        (parse_trust, "trusted", "unknown trust 'trusted'"),
        (parse_trust, {"tier": "operator"}, "trust must be a string"),
        (parse_realm, 7, "realm must be a string"),
    ],
    ids=lambda v: v.__name__ if callable(v) else None,
)
def test_a_bad_filter_value_is_invalid_params_naming_the_field(parse, raw, message):
    with pytest.raises(InvalidParams) as raised:
        parse(raw)
    assert raised.value.detail == message
    assert raised.value.message == f"Invalid params: {message}"


def test_a_realm_must_have_a_store_file(agent_memory_dir):
    write_notes(agent_memory_dir, "team:blue", 1)
    assert parse_realm(" team:blue ") == "team:blue"
    assert parse_realm(None) is None and parse_realm("  ") is None
    with pytest.raises(UnknownRealm) as raised:
        parse_realm("team:red")
    assert (raised.value.name, raised.value.message) == ("team:red", "Invalid params: unknown realm 'team:red'")
    assert not list(agent_memory_dir.glob("team*red*"))  # asking never creates a realm


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, RecordFilter()),
        ({"scope": "mob", "scope_key": "ops"}, RecordFilter(scope_kind="mob", scope_key="ops")),
        ({"status": "quarantined"}, RecordFilter(status="quarantined")),
        # identity implies scope identity and that scope key, unless they are given
        ({"identity": SCOUT}, RecordFilter(scope_kind="identity", scope_key=SCOUT)),
        ({"identity": f" {SCOUT} ", "status": "active"},
         RecordFilter(scope_kind="identity", scope_key=SCOUT, status="active")),
        ({"identity": SCOUT, "scope": "mob"}, RecordFilter(scope_kind="mob", scope_key=SCOUT)),
        ({"identity": SCOUT, "scope_key": "identity:lead"},
         RecordFilter(scope_kind="identity", scope_key="identity:lead")),
        ({"identity": "  ", "scope": "realm"}, RecordFilter(scope_kind="realm")),
        # the console's kind and trust filters are the HTML page's; the RPC params never set them
        ({"kind": "fact", "trust": "operator"}, RecordFilter()),
    ],
)
def test_record_filter_from_panel_params(params, expected):
    assert record_filter(params) == expected


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"scope": "team"}, "unknown scope 'team'"),
        ({"scope": 1}, "scope must be a string"),
        ({"status": "gone"}, "unknown status 'gone'"),
        ({"status": True}, "status must be a string"),
        ({"identity": 42}, "identity must be a string"),
        ({"identity": SCOUT, "scope_key": ["x"]}, "scope_key must be a string"),
        # several bad fields: the first checked (scope, status, identity, scope_key) is named
        ({"scope": "team", "status": "gone", "identity": 1}, "unknown scope 'team'"),
        ({"status": "gone", "identity": 1}, "unknown status 'gone'"),
        ({"identity": 1, "scope_key": 2}, "identity must be a string"),
    ],
)
def test_a_bad_record_filter_is_invalid_params_naming_the_field(params, message):
    with pytest.raises(InvalidParams) as raised:
        record_filter(params)
    assert raised.value.detail == message
