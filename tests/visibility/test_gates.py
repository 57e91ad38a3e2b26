"""Every gate of memory_panel/visibility.py over a table of (access posture, arguments) → expected.

Each Access is the real one: an access.toml text from tests/support/postures.py loaded through
access, for the subject that posture's table row names. Expectations are read off
the postures' rules (docs/access.md §2.4, §2.6), not computed by the console.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from memory_panel import visibility
from memory_panel.errors import AccessDenied
from memory_panel.store.records import MemoryRecord
from access.caller import Access, Caller, access_for
from tests.support.postures import CALLERS, LEAD, SCOUT, USER, everyone_may, use_caller_posture, write_access_toml

REVIEW = "memory.quarantine.review"
READ = "agent.memory.read"

# Table columns: each posture with the subject that calls under it ("open": no access.toml), plus
# memory reads without agent.view: identity rows need both (docs/access.md §2.4).
COLUMNS = {**CALLERS, "read_without_view": (everyone_may(READ), USER)}
NAMES = tuple(COLUMNS)


def by_column(flags: str) -> dict[str, bool]:
    """``"110..."`` → {posture: expected}, one digit per column of ``COLUMNS`` in order; ``-`` leaves
    that posture to a test of its own."""
    assert len(flags) == len(NAMES), flags
    return {name: flag == "1" for name, flag in zip(NAMES, flags, strict=True) if flag != "-"}


@pytest.fixture
def access_under(tmp_path, settings) -> Callable[[str], Access]:
    def load(name: str) -> Access:
        if name in CALLERS:
            return access_for(Caller(subject=use_caller_posture(settings, tmp_path, name)))
        text, subject = COLUMNS[name]
        settings.MOBKIT_ACCESS_CONFIG = write_access_toml(tmp_path / f"{name}.toml", text)
        return access_for(Caller(subject=subject))

    return load


_BASE = MemoryRecord(
    realm="default", id="mem-1", scope_kind="identity", scope_key=SCOUT, kind="fact", title="t",
    description="", tags=[], provenance={}, trust="agent_observed", status="active", status_detail=None,
    supersedes=None, derived_from=[], working_set_rank=None, content_hash="", created_at_ms=1,
    updated_at_ms=1, usage={}, ever_quarantined=False, body_bytes=0,
)


def record(scope_kind: str = "identity", scope_key: str = SCOUT, status: str = "active", *,
           ever_quarantined: bool = False) -> MemoryRecord:
    return replace(_BASE, scope_kind=scope_kind, scope_key=scope_key, status=status,
                   ever_quarantined=ever_quarantined)


QUARANTINED = record(status="quarantined", ever_quarantined=True)
RETIRED_EVIDENCE = record(status="tombstoned", ever_quarantined=True)
FORGOTTEN = record(status="tombstoned")

# (gate, arguments) → which columns answer True.
#                                                         open reader partial scoped none reviewer bare admin read-no-view
BOOLEAN_GATES = [
    (visibility.scope_visible, ("identity", SCOUT),        "111101010"),
    (visibility.scope_visible, ("identity", LEAD),         "111001010"),
    (visibility.scope_visible, ("mob", "ops"),             "111001010"),
    (visibility.scope_visible, ("operator", "oncall"),     "110001010"),
    (visibility.scope_visible, ("realm", ""),              "111001011"),
    # docs/access.md §2.8: an unknown kind needs every resource-less read grant (as operator, here).
    (visibility.scope_visible, ("team", "x"),              "110001010"),
    (visibility.scope_kind_readable, ("identity",),        "111101010"),
    (visibility.scope_kind_readable, ("mob",),             "111001010"),
    (visibility.scope_kind_readable, ("operator",),        "110001010"),
    (visibility.scope_kind_readable, ("realm",),           "111001011"),
    (visibility.sees_quarantined, (),                      "100001110"),
    (visibility.can_review_quarantine, (),                 "100001110"),
    (visibility.record_visible, (record(),),               "111101010"),
    (visibility.record_visible, (record("mob", "ops"),),   "111001010"),
    (visibility.record_visible, (QUARANTINED,),            "100001010"),
    (visibility.record_visible, (RETIRED_EVIDENCE,),       "100001010"),
    (visibility.record_visible, (FORGOTTEN,),              "111101010"),
    # docs/access.md §2.8: an agent's injections and harvests follow its identity-scope rule.
    (visibility.identity_visible, (SCOUT,),                "111101010"),
    (visibility.identity_visible, (LEAD,),                 "111001010"),
    # docs/timeline.md §3.4: agent.view on the event's identity, and the scope it names if any.
    (visibility.event_visible, (SCOUT, None, None),        "111111010"),
    (visibility.event_visible, ("_system", None, None),    "111011010"),
    (visibility.event_visible, (SCOUT, "mob", "ops"),      "111001010"),
    (visibility.event_visible, (LEAD, "identity", LEAD),   "111001010"),
    # docs/panel-tiles.md: without review, quarantined and tombstoned rows are never counted.
    (visibility.tile_status_counted, ("active",),          "111111111"),
    (visibility.tile_status_counted, ("tombstoned",),      "100001110"),
    (visibility.tile_status_counted, ("quarantined",),     "100001110"),
    (visibility.can_read_memory, (),                       "111101011"),
    (visibility.can_read_realm_history, (),                "111001011"),
    (visibility.may_read_ledger, (),                       "111001011"),
]


@pytest.mark.parametrize(
    ("gate", "args", "name", "expected"),
    [(gate, args, name, want) for gate, args, flags in BOOLEAN_GATES for name, want in by_column(flags).items()],
    ids=lambda value: getattr(value, "__name__", None) if callable(value) else None,
)
def test_boolean_gate_answers_what_the_posture_grants(access_under, gate, args, name, expected):
    assert gate(access_under(name), *args) is expected


@pytest.mark.parametrize("name", NAMES)
def test_scope_checker_agrees_with_scope_visible_for_every_scope(access_under, name):
    access = access_under(name)
    check = visibility.scope_checker(access)
    for kind, key in (("identity", SCOUT), ("identity", LEAD), ("mob", "ops"), ("operator", "oncall"),
                      ("realm", ""), ("team", "x")):
        assert check(kind, key) is visibility.scope_visible(access, kind, key), (kind, key)


# Scope kinds no grant could reveal, excluded before any row is read.
HIDDEN_KINDS = {
    "open": (),
    "reader": (),
    "partial": ("operator",),
    "scoped": ("mob", "operator", "realm"),
    "none": ("mob", "operator", "realm"),
    "reviewer": (),
    "bare_reviewer": ("mob", "operator", "realm"),
    "admin": (),
    "read_without_view": ("mob", "operator"),
}


@pytest.mark.parametrize("name", NAMES)
def test_hidden_scope_kinds_are_the_kinds_without_a_resource_less_grant(access_under, name):
    assert visibility.hidden_scope_kinds(access_under(name)) == HIDDEN_KINDS[name]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (record(), False),
        (record(ever_quarantined=True), False),  # released: active again, no longer evidence
        (record(status="superseded", ever_quarantined=True), False),
        (QUARANTINED, True),
        (RETIRED_EVIDENCE, True),
        (FORGOTTEN, False),
    ],
)
def test_reviewer_only_rows_are_quarantined_or_retired_quarantine_evidence(row, expected):
    assert visibility.reviewer_only(row) is expected


# The action a denial of the row names, per posture: review while review is missing, else the
# scope's read action.
DENIAL_ACTIONS = [
    (QUARANTINED, {name: REVIEW for name in NAMES} | {name: READ for name in ("open", "reviewer", "bare_reviewer",
                                                                              "admin")}),
    (record("operator", "oncall"), {name: "operator.memory.read" for name in NAMES}),
    (record("mob", "ops"), {name: "mob.memory.read" for name in NAMES}),
    # docs/access.md §2.8: the first resource-less read grant the caller lacks.
    (record("team", "x"), {name: READ for name in NAMES} | {"partial": "operator.memory.read",
                                                             "read_without_view": "mob.memory.read"}),
]


@pytest.mark.parametrize(
    ("row", "name", "action"),
    [(row, name, action) for row, by_name in DENIAL_ACTIONS for name, action in by_name.items()],
)
def test_record_denial_names_review_or_the_scopes_read_action(access_under, row, name, action):
    assert visibility.record_denial_action(access_under(name), row) == action


def denial(action: str, resource: str | None = None) -> tuple[str, str | None]:
    return (action, resource)


# (gate, keyword arguments) → {posture: the (action, resource) AccessDenied names, or None: allowed}.
REQUIRE_GATES = [
    (visibility.require_realm_history, {}, "111001011", denial(READ)),
    (visibility.require_ledger, {}, "111001011", denial(READ)),
    (visibility.require_review, {}, "100001110", denial(REVIEW)),
    (visibility.require_identity_memory, {"identity": SCOUT}, "111101010", denial(READ, SCOUT)),
    (visibility.require_record_list, {"scope_kind": None, "scope_key": None}, "111111111", None),
    (visibility.require_record_list, {"scope_kind": "identity", "scope_key": None}, "111111111", None),
    (visibility.require_record_list, {"scope_kind": "realm", "scope_key": None}, "111111111", None),
    (visibility.require_record_list, {"scope_kind": "mob", "scope_key": None}, "111001010",
     denial("mob.memory.read")),
    (visibility.require_record_list, {"scope_kind": "operator", "scope_key": None}, "110001010",
     denial("operator.memory.read")),
    (visibility.require_record_list, {"scope_kind": "identity", "scope_key": LEAD}, "11100101-",
     denial(READ, LEAD)),
]


@pytest.mark.parametrize(
    ("gate", "kwargs", "name", "allowed", "refusal"),
    [
        (gate, kwargs, name, allowed, refusal)
        for gate, kwargs, flags, refusal in REQUIRE_GATES
        for name, allowed in by_column(flags).items()
    ],
    ids=lambda value: getattr(value, "__name__", None) if callable(value) else None,
)
def test_require_gate_passes_or_raises_access_denied_naming_action_and_resource(
    access_under, gate, kwargs, name, allowed, refusal
):
    access = access_under(name)
    if allowed:
        assert gate(access, **kwargs) is None
        return
    with pytest.raises(AccessDenied) as raised:
        gate(access, **kwargs)
    assert (raised.value.action, raised.value.resource) == refusal
    assert raised.value.message == f"access denied: {refusal[0]}"


def test_an_identity_listing_without_agent_view_is_refused_for_agent_view(access_under):
    # docs/wire-contract.md §1.2 (a): read and view are both asked, in that order.
    with pytest.raises(AccessDenied) as raised:
        visibility.require_record_list(access_under("read_without_view"), scope_kind="identity", scope_key=LEAD)
    assert (raised.value.action, raised.value.resource) == ("agent.view", LEAD)
