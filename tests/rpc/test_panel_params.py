"""Every panel method × its params: whole results against what the test wrote (docs/wire-contract.md §1.2–§1.3, docs/store-format.md §5)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory_panel.simulator.store_writer import (
    agent,
    batch,
    create_op,
    identity_scope,
    mob_scope,
    new_record,
    realm_file,
    set_rank_op,
)
from tests.support.postures import LEAD, SCOUT, USER
from tests.support.rpc import denied, invalid_params, panel
from tests.support.worlds import DREAM_VERDICT_KEYS
from tests.support.written import T0, TAINT, Written, new_scribe, newest_first, overview_rows

pytestmark = pytest.mark.django_db

LIST_METHODS = ("dreams", "proposals", "injections", "harvests", "dream_runs", "audit_verdicts")
ALL_METHODS = ("records", "record", "quarantine", "overview", *LIST_METHODS)


@pytest.fixture
def reader(world, signed_in):
    return signed_in(USER)


# ---------------------------------------------------------------------------------------------
# Expected results built from the world's account of what was written


def expected(world, method: str, realm: str | None = None) -> dict:
    realms = [realm] if realm else world.realms
    rows = [r for r in world.rows.values() if r.realm in realms]
    keep = lambda items: [item for item in items if item["realm"] in realms]  # noqa: E731
    if method == "records":
        return {"records": [r.list_row() for r in newest_first(rows)], "next_cursor": None, "realms": realms}
    if method == "quarantine":
        queue = sorted((r for r in rows if r.status_kind == "quarantined"), key=lambda r: (r.created_at_ms, r.id),
                       reverse=True)
        return {"records": [r.list_row() for r in queue], "pending_promotions": keep(world.promotions),
                "realms": realms}
    if method == "overview":
        return {"scopes": overview_rows(rows), "realms": realms, "floors": {"records": 4000, "bytes": 33_554_432}}
    key, items = {
        "dreams": ("runs", world.dreams),
        "proposals": ("proposals", world.proposals),
        "injections": ("injections", sorted(world.injections, key=lambda i: i["at_ms"], reverse=True)),
        "harvests": ("harvests", world.harvests),
        "dream_runs": ("runs", world.dream_runs),
        "audit_verdicts": ("verdicts", world.audit_verdicts),
    }[method]
    return {key: keep(items), "realms": realms}


def biography(world, name: str, chain: list[str]) -> dict:
    row = world[name]
    injections = []
    for item in sorted((i for i in world.injections if i["record_id"] == row.id), key=lambda i: i["at_ms"],
                       reverse=True):
        entry = {"record_id": item["record_id"], "identity": item["identity"]}
        if item["session_key"] is not None:  # docs/wire-contract.md §1.2 (b): omitted for build rows
            entry["session_key"] = item["session_key"]
        injections.append({**entry, "surface": item["surface"], "at_ms": item["at_ms"]})
    return {"realm": row.realm, "record": row.full(), "chain": [world[c].list_row() for c in chain],
            "injections": injections}


# ---------------------------------------------------------------------------------------------
# Absent and valid params: whole results


@pytest.mark.parametrize("method", [m for m in ALL_METHODS if m != "record"])
@pytest.mark.parametrize("realm", [None, "default", "other"])
def test_method_answers_whole_result(client, reader, world, method, realm):
    params = {"realm": realm} if realm else None
    assert panel(client, method, params).result == expected(world, method, realm)


@pytest.mark.parametrize(
    "name, chain",
    [
        ("tea", ["tea"]),
        ("route_v1", ["route_v1", "route_v2", "claimant"]),
        ("route_v2", ["route_v1", "route_v2", "claimant"]),  # the same oldest-first chain from any entry
        ("claimant", ["route_v1", "route_v2", "claimant"]),
        ("lead_fact", ["lead_fact"]),
        ("quarantined", ["quarantined"]),
        ("released_origin", ["released_origin"]),
        ("released", ["released"]),
        ("retired", ["retired"]),
        ("dreamt", ["dreamt"]),
        ("mob", ["mob"]),
        ("operator", ["operator"]),
        ("other_scout", ["other_scout"]),
    ],
)
def test_record_answers_full_biography(client, reader, world, name, chain):
    want = biography(world, name, chain)
    assert panel(client, "record", {"memory_id": world[name].id}).result == want
    assert panel(client, "record", {"memory_id": f"  {world[name].id} ", "realm": world[name].realm}).result == want


def test_record_json_keys_follow_mobkit_field_order(client, reader, world):
    record = panel(client, "record", {"memory_id": world["route_v2"].id}).result["record"]
    assert list(record) == [
        "id", "scope", "kind", "title", "description", "body", "tags", "provenance", "trust", "status",
        "supersedes", "derived_from", "created_at_ms", "updated_at_ms", "usage", "ever_quarantined", "content_hash",
    ]
    row = panel(client, "records", {"realm": "default", "limit": 1}).result["records"][0]
    assert "body" not in row and isinstance(row["body_bytes"], int)


def test_record_in_another_realm_is_found_only_there(client, reader, world):
    other = world["other_scout"].id
    assert panel(client, "record", {"memory_id": other, "realm": "other"}).result["realm"] == "other"
    assert panel(client, "record", {"memory_id": other, "realm": "default"}).error == {
        "code": -32001, "message": f"unknown memory record '{other}'", "data": None}


@pytest.mark.parametrize(
    "params, names",
    [
        ({"identity": SCOUT}, ["tea", "route_v1", "route_v2", "claimant", "quarantined", "retired", "forgotten",
                            "other_scout"]),
        ({"identity": SCOUT, "realm": "default", "status": "active"}, ["tea", "route_v2"]),  # v2 still active
        ({"scope": "identity", "scope_key": LEAD}, ["lead_fact", "released_origin", "released"]),
        ({"identity": LEAD, "scope_key": "nobody"}, []),
        ({"scope": "mob"}, ["mob"]),
        ({"scope": "mob", "scope_key": "ops"}, ["mob"]),
        ({"scope": "operator"}, ["operator"]),
        ({"scope": "realm"}, ["realm", "dreamt"]),
        ({"status": "superseded"}, ["route_v1"]),
        ({"status": "quarantined"}, ["quarantined", "claimant"]),
        ({"status": " tombstoned "}, ["released_origin", "retired", "forgotten"]),
        ({"scope": "identity", "status": "active", "scope_key": SCOUT, "realm": "other"}, ["other_scout"]),
    ],
)
def test_records_filters(client, reader, world, params, names):
    rows = newest_first(world[n] for n in names)
    realms = [params["realm"]] if "realm" in params else world.realms
    assert panel(client, "records", params).result == {
        "records": [r.list_row() for r in rows], "next_cursor": None, "realms": realms}


# ---------------------------------------------------------------------------------------------
# Empty strings, unknown values, malformed cursors, missing and unknown records


def test_empty_string_params_are_absent(client, reader, world):
    blank = {"realm": "", "scope": " ", "status": "", "identity": "", "scope_key": "", "cursor": "", "limit": None}
    assert panel(client, "records", blank).result == expected(world, "records")
    for method in ("quarantine", "overview", *LIST_METHODS):
        assert panel(client, method, {"realm": "  "}).result == expected(world, method), method


@pytest.mark.parametrize("scope", ["galaxy", "Identity", "agent", " mobs "])
def test_unknown_scope_is_invalid_params(client, reader, scope):
    assert panel(client, "records", {"scope": scope}).error == invalid_params(f"unknown scope '{scope.strip()}'")


@pytest.mark.parametrize("status", ["archived", "ACTIVE", "deleted"])
def test_unknown_status_is_invalid_params(client, reader, status):
    assert panel(client, "records", {"status": status}).error == invalid_params(f"unknown status '{status}'")


@pytest.mark.parametrize("cursor", ["x", ":id", "12:", "-1:id", "1.5:id", "99999999999999999999999:id",
                                    "18446744073709551616:id", "+5:id", " :id", "١٢:id", 5, 1.5, True, ["1:a"]])
@pytest.mark.parametrize("realm", [None, "default"])
def test_malformed_cursor_is_invalid_params(client, reader, cursor, realm):
    params = {"cursor": cursor} | ({"realm": realm} if realm else {})
    assert panel(client, "records", params).error == invalid_params("malformed cursor")


def test_cursor_at_the_u64_edge_is_accepted(client, reader, world):
    top = panel(client, "records", {"realm": "default", "cursor": "18446744073709551615:zzz"}).result
    assert top == expected(world, "records", "default")
    first = world["tea"]
    assert panel(client, "records", {"realm": "default", "cursor": f"{first.updated_at_ms}:a:b"}).result["records"] == [
        r.list_row() for r in newest_first(world.rows.values())
        if r.realm == "default" and (r.updated_at_ms, r.id) < (first.updated_at_ms, "a:b")
    ]


@pytest.mark.parametrize("params", [{}, {"memory_id": ""}, {"memory_id": "   "}, {"memory_id": None}])
def test_record_without_memory_id_is_invalid_params(client, reader, world, params):
    assert panel(client, "record", params).error == invalid_params("memory_id is required")


@pytest.mark.parametrize("memory_id", ["mem-nope", "mem-0-0-0-0000000000000000", "' OR 1=1 --"])
def test_unknown_record_is_32001(client, reader, world, memory_id):
    assert panel(client, "record", {"memory_id": memory_id}).error == {
        "code": -32001, "message": f"unknown memory record '{memory_id}'", "data": None}


@pytest.mark.parametrize("method", ALL_METHODS)
@pytest.mark.parametrize("realm", ["nope", "../default", "default.sqlite3"])
def test_unknown_realm_is_invalid_params(client, reader, world, method, realm):
    params = {"realm": realm, "memory_id": world["tea"].id}
    assert panel(client, method, params).error == invalid_params(f"unknown realm '{realm}'")


def test_unknown_realm_never_creates_a_file(client, reader, world):
    panel(client, "records", {"realm": "brand-new"})
    assert not (world.root / "brand-new.sqlite3").exists()


# ---------------------------------------------------------------------------------------------
# Limits: a JSON unsigned integer clamped to [1, max]; anything else is the default (docs/wire-contract.md §1.2)

RECORD_LIMITS = [(None, 50), (0, 1), (1, 1), (7, 7), (200, 200), (201, 200), (-5, 50), ("x", 50), ("10", 50),
                 (1.5, 50), (2.0, 50), (True, 50), (False, 50), (2**64, 50), (2**64 - 1, 200)]
LIST_LIMITS = [(None, 20), (0, 1), (1, 1), (7, 7), (100, 100), (101, 100), (200, 100), (201, 100), (-5, 20),
               ("x", 20), (1.5, 20), (True, 20), (2**64, 20)]
BULK = 205  # more rows than any max, so every clamp shows in the result
LISTED = 105


class Bulk:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.rows: dict[str, Written] = {}
        s = new_scribe(root, "bulk", rows=self.rows)
        who = identity_scope("bulk", "identity:bulk")
        ops, quarantined_ops = [], []
        for i in range(BULK):
            for status, target in (("active", ops), ("quarantined", quarantined_ops)):
                memory_id = f"mem-bulk-{status[0]}-{i:04d}"
                # Every third pair shares a timestamp: ties are broken by id (docs/store-format.md §5.1).
                at = T0 + (i // 3) * 10 + (status == "quarantined")
                title, body = f"{status} {i}", f"body {status} {i}"
                target.append(create_op(who, new_record(kind="fact", title=title, body=body), id=memory_id,
                                        created_at_ms=at, updated_at_ms=at))
                self.rows[memory_id] = Written(
                    id=memory_id, realm="bulk", scope_kind="identity", scope_key="identity:bulk", title=title,
                    body=body, created_at_ms=at, updated_at_ms=at,
                    author={"author": "agent", "identity": "identity:bulk"},
                    status={"status": "quarantined", "reason": TAINT} if status == "quarantined" else {"status": "active"},
                    ever_quarantined=status == "quarantined")
        s.writer.apply_batch(batch(realm="bulk", author=agent("identity:bulk"), ops=ops))
        s.writer.apply_batch(batch(realm="bulk", author=agent("identity:bulk"), ops=quarantined_ops), gate_reason=TAINT)
        ranked = self.rows["mem-bulk-a-0000"]
        self.injections, self.proposals, self.harvests, self.runs, self.verdicts, self.dreams = [], [], [], [], [], []
        for i in range(LISTED):
            at = s.tick()
            s.writer.record_injection(ranked.id, "identity:bulk", surface="build", at_ms=at, count_usage=False)
            self.injections.append({"realm": "bulk", "record_id": ranked.id, "identity": "identity:bulk",
                                    "session_key": None, "surface": "build", "at_ms": at})
            at = s.tick()
            pid = s.writer.propose(mob_scope("bulk", "m"), new_record(kind="fact", title=f"p{i}", body="b"),
                                   author=agent("identity:bulk"), proposal_id=f"prop-{i:04d}")
            self.proposals.append({"realm": "bulk", "proposal_id": pid, "scope_kind": "mob", "scope_key": "m",
                                   "title": f"p{i}", "kind": "fact", "author": 'Agent { identity: "identity:bulk" }',
                                   "status": "pending", "created_at_ms": at, "tainted": False})
            at = s.tick()
            s.writer.add_pending_harvest(f"identity:h{i:03d}", retired_at_ms=at)
            self.harvests.append({"realm": "bulk", "identity": f"identity:h{i:03d}", "session_key": None,
                                  "cause": "retire", "retired_at_ms": at})
            run_id = f"run-{i:03d}"
            at = s.tick()
            s.writer.steward_batch(run_id, [set_rank_op(ranked.id, i)])
            self.dreams.append({"realm": "bulk", "run_id": run_id, "first_op_at_ms": at, "last_op_at_ms": at,
                                "ops": 1, "op_kinds": {"set_rank": 1}, "quarantined_ops": 0,
                                "memory_ids": [ranked.id], "rationales": []})
            at = s.tick()
            s.writer.record_dream_run(run_id, started_at_ms=at - 1, ops_committed=1,
                                      audit_verdicts=[(ranked.id, "dead_weight", f"r{i}")])
            self.runs.append({"realm": "bulk", "run_id": run_id, "partition": "realm", "started_at_ms": at - 1,
                              "completed_at_ms": at, "ops_committed": 1,
                              "detail": {"phases": [], "verdicts": {k: 0 for k in DREAM_VERDICT_KEYS}, "skips": []}})
            self.verdicts.append({"realm": "bulk", "run_id": run_id, "record_id": ranked.id, "verdict": "dead_weight",
                                  "rationale": f"r{i}", "created_at_ms": at})
        ranked.working_set_rank = LISTED - 1
        s.writer.close()

    def ordered(self, method: str) -> tuple[str, list]:
        rows = list(self.rows.values())
        return {
            "records": ("records", [r.list_row() for r in newest_first(rows)]),
            "quarantine": ("records", [r.list_row() for r in sorted(
                (r for r in rows if r.status_kind == "quarantined"), key=lambda r: (r.created_at_ms, r.id),
                reverse=True)]),
            "injections": ("injections", self.injections[::-1]),
            "proposals": ("proposals", self.proposals),
            "harvests": ("harvests", self.harvests),
            "dreams": ("runs", self.dreams[::-1]),
            "dream_runs": ("runs", self.runs[::-1]),
            "audit_verdicts": ("verdicts", self.verdicts[::-1]),
        }[method]


@pytest.fixture(scope="module")
def bulk_files(tmp_path_factory) -> Bulk:
    return Bulk(tmp_path_factory.mktemp("bulk") / "agent-memory")


@pytest.fixture
def bulk(bulk_files: Bulk, settings, signed_in) -> Bulk:
    settings.MOBKIT_PERSISTENT_STATE = bulk_files.root.parent
    settings.MOBKIT_AGENT_MEMORY_ROOT = bulk_files.root
    settings.MOBKIT_ACCESS_CONFIG = None
    signed_in(USER)
    return bulk_files


@pytest.mark.parametrize("method", ["records", "quarantine"])
@pytest.mark.parametrize("limit, effective", RECORD_LIMITS)
def test_record_limits_clamp_or_default(client, bulk, method, limit, effective):
    params = {} if limit is None else {"limit": limit}
    result = panel(client, method, params).result
    key, ordered = bulk.ordered(method)
    assert result[key] == ordered[:effective]
    if method == "records":
        assert result["next_cursor"] == "{updated_at_ms}:{id}".format(**ordered[effective - 1])


@pytest.mark.parametrize("method", LIST_METHODS)
@pytest.mark.parametrize("limit, effective", LIST_LIMITS)
def test_list_limits_clamp_or_default(client, bulk, method, limit, effective):
    params = {"realm": "bulk"} if limit is None else {"limit": limit, "realm": "bulk"}
    key, ordered = bulk.ordered(method)
    assert panel(client, method, params).result == {key: ordered[:effective], "realms": ["bulk"]}


# ---------------------------------------------------------------------------------------------
# Older-format realms and hand-damaged rows


def test_older_format_realm_answers_empty_sections_for_missing_tables(client, signed_in, agent_memory_dir):
    rows: dict[str, Written] = {}
    old = new_scribe(agent_memory_dir, "legacy", fmt="older", rows=rows)
    kept = old.remember(identity_scope("legacy", SCOUT), "Older note", "Written before ever_quarantined")
    held = old.remember(identity_scope("legacy", SCOUT), "Older taint", "Held", author=agent(SCOUT), gate_reason=TAINT)
    old.writer.close()
    assert held.ever_quarantined is False  # the older format has no such column
    signed_in(USER)

    assert panel(client, "records", {"realm": "legacy"}).result == {
        "records": [held.list_row(), kept.list_row()], "next_cursor": None, "realms": ["legacy"]}
    assert panel(client, "record", {"memory_id": kept.id}).result == {
        "realm": "legacy", "record": kept.full(), "chain": [kept.list_row()], "injections": []}
    assert panel(client, "quarantine", {}).result == {
        "records": [held.list_row()], "pending_promotions": [], "realms": ["legacy"]}
    for method, key in (("dream_runs", "runs"), ("audit_verdicts", "verdicts"), ("dreams", "runs"),
                        ("proposals", "proposals"), ("injections", "injections"), ("harvests", "harvests")):
        assert panel(client, method, {}).result == {key: [], "realms": ["legacy"]}, method


def test_hand_damaged_json_columns_answer_with_defaults_and_malformed_columns(client, signed_in, agent_memory_dir):
    s = new_scribe(agent_memory_dir, "default")
    good = s.remember(identity_scope("default", SCOUT), "Fine", "A fine row")
    s.writer.close()
    conn = sqlite3.connect(realm_file("default", agent_memory_dir))
    conn.execute(
        "INSERT INTO records(memory_id, scope_kind, scope_key, kind, title, description, body, tags, provenance,"
        " trust, status_kind, status_detail, supersedes, derived_from, working_set_rank, rank_set_at_ms,"
        " content_hash, created_at_ms, updated_at_ms, usage_stats, tombstoned_at_ms, ever_quarantined)"
        " VALUES ('mem-hand', 'identity', ?, 'fact', 'Hand edit', '', 'édité à la main', '[\"a\", 3',"
        " '{\"evidence\": []}', 'agent_observed', 'active', NULL, NULL, '{\"x\": 1}', NULL, NULL, 'abc',"
        " ?, ?, 'null', NULL, 0)",
        (SCOUT, T0 + 10_000, T0 + 10_000),
    )
    conn.commit()
    conn.close()
    signed_in(USER)

    damaged = {
        "id": "mem-hand", "scope": {"scope": "identity", "realm": "default", "identity": SCOUT}, "kind": "fact",
        "title": "Hand edit", "description": "", "body_bytes": len("édité à la main".encode()), "tags": [],
        "provenance": {"evidence": [], "author": {"author": "unknown"}}, "trust": "agent_observed",
        "status": {"status": "active"}, "derived_from": [], "created_at_ms": T0 + 10_000,
        "updated_at_ms": T0 + 10_000,
        "usage": {"injected_count": 0, "explicit_recall_count": 0, "judged_useful_count": 0},
        "ever_quarantined": False, "malformed_columns": ["tags", "derived_from", "provenance", "usage_stats"],
    }
    listing = panel(client, "records", {})
    assert listing.status == 200
    assert listing.result["records"] == [damaged, good.list_row()]
    detail = panel(client, "record", {"memory_id": "mem-hand"}).result
    full = {k: v for k, v in damaged.items() if k not in ("body_bytes", "malformed_columns")}
    assert detail["record"] == {**full, "body": "édité à la main", "content_hash": "abc",
                                "malformed_columns": damaged["malformed_columns"]}
    assert detail["chain"] == [damaged]
    assert panel(client, "overview", {}).result["scopes"] == [{
        "realm": "default", "scope_kind": "identity", "scope_key": SCOUT, "active": 2, "quarantined": 0,
        "superseded": 0, "tombstoned": 0, "body_bytes": len("A fine row") + len("édité à la main"),
        "floor_pressure": False}]


def test_no_realm_files_answer_empty(client, signed_in, agent_memory_dir):
    signed_in(USER)
    assert panel(client, "records", {}).result == {"records": [], "next_cursor": None, "realms": []}
    assert panel(client, "record", {"memory_id": "mem-x"}).error["code"] == -32001
    assert panel(client, "overview", {}).result["scopes"] == []


def test_denials_travel_at_http_200(client, world, posture):
    posture("scoped")
    reply = panel(client, "dreams", {})
    assert reply.status == 200
    assert reply.error == denied("agent.memory.read", None)
