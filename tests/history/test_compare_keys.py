"""Two realms compared by logical key (docs/history.md §6), against two realms written with known
differences in every kind of scope: the counts and lists equal a walk of the realm files' rows,
every list pages through each key exactly once, each access posture counts and lists only the
scopes it may read (docs/access.md §2.8), the exports hold every difference, and a moment
compares the records active then."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import sqlite3
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from access.caller import Caller, access_for
from memory_panel.selectors import compare
from memory_panel.selectors.compare import LISTS, compare_realms
from memory_panel.simulator.store_writer import (
    ManualClock,
    StoreWriter,
    agent,
    identity_scope,
    mob_scope,
    operator_scope,
    realm_file,
    realm_scope,
)
from tests.support.grants import GRANTS
from tests.support.postures import CALLERS, LUKA, SCOUT, use_caller_posture

pytestmark = pytest.mark.django_db

CHANGES = "/console/memory/changes/"
NORTH, SOUTH = "north", "south"
START_MS = 1_790_000_000_000
TAINT = "session tainted by web tool 'web_fetch'"


def scopes(realm: str) -> list[dict]:
    return [identity_scope(realm, SCOUT), identity_scope(realm, LUKA), mob_scope(realm, "ops"),
            operator_scope(realm, "oncall"), realm_scope(realm)]


@pytest.fixture
def realms(agent_memory_dir: Path) -> dict[str, int]:
    """North and south: in each scope, keys alike, only in one, with another body, and the cases a
    key's records make: duplicate titles (the newest compared), a supersede, a tombstone, a
    quarantined record (not active, so not compared). Returns moments of the writing."""
    clock = ManualClock(START_MS)
    with StoreWriter.create(NORTH, root=agent_memory_dir, clock=clock) as north, \
            StoreWriter.create(SOUTH, root=agent_memory_dir, clock=clock) as south:
        for n, (mine, theirs) in enumerate(zip(scopes(NORTH), scopes(SOUTH))):
            for i in range(4):
                for writer, scope in ((north, mine), (south, theirs)):
                    writer.remember(scope, f"Alike {n}.{i}", f"The same words {i}.")
                north.remember(mine, f"North only {n}.{i}", "Written in the north.")
                south.remember(theirs, f"South only {n}.{i}", "Written in the south.")
                north.remember(mine, f"Differs {n}.{i}", f"The river is high {i}.")
                south.remember(theirs, f"Differs {n}.{i}", f"The river is low {i}.")
            clock.advance(10)
            # Duplicate titles in north: the newest is compared, so one key alike, one differing.
            north.remember(mine, f"Twice {n}", "An older draft.")
            north.remember(mine, f"Twice but newer differs {n}", "The agreed text.")
            south.remember(theirs, f"Twice {n}", "The agreed text.")
            south.remember(theirs, f"Twice but newer differs {n}", "The agreed text.")
            clock.advance(10)
            north.remember(mine, f"Twice {n}", "The agreed text.")
            north.remember(mine, f"Twice but newer differs {n}", "A newer draft.")
            # Superseded in south to north's body: alike; tombstoned in south: only in north.
            north.remember(mine, f"Revised {n}", "Second version.")
            first = south.remember(theirs, f"Revised {n}", "First version.")
            south.supersede(first, f"Revised {n}", "Second version.")
            north.remember(mine, f"Forgotten {n}", "Kept in the north.")
            south.forget(south.remember(theirs, f"Forgotten {n}", "Kept in the north."))
            if theirs["scope"] == "identity":  # the gate quarantines an agent's own writes
                south.remember(theirs, f"Held {n}", "Quarantined in the south.", author=agent(theirs["identity"]),
                               gate_reason=TAINT)
            clock.advance(10)
        before = clock()
        clock.advance(1000)
        # After ``before``: north forgets a key alike until then, south writes one it lacked.
        north.forget(_memory_id(north, "Alike 0.0"))
        south.remember(scopes(SOUTH)[0], "North only 0.0", "Written in the north.")
    return {"before": before}


def _memory_id(writer: StoreWriter, title: str) -> str:
    return writer.conn.execute("SELECT memory_id FROM records WHERE title = ? AND status_kind = 'active'",
                               (title,)).fetchone()[0]


def walk(root: Path, realm: str) -> dict[tuple[str, str, str], tuple[str, str]]:
    """Each key's newest active record in the realm file, read with plain SQLite: (id, body)."""
    newest: dict[tuple[str, str, str], tuple[int, str, str]] = {}
    with sqlite3.connect(f"file:{realm_file(realm, root)}?mode=ro", uri=True) as conn:
        for kind, key, title, updated, memory_id, body in conn.execute(
                "SELECT scope_kind, scope_key, title, updated_at_ms, memory_id, body FROM records"
                " WHERE status_kind = 'active'"):
            kept = newest.get((kind, key, title))
            if kept is None or (updated, memory_id) > kept[:2]:
                newest[(kind, key, title)] = (updated, memory_id, body)
    return {key: (memory_id, body) for key, (_, memory_id, body) in newest.items()}


def expected(root: Path, visible=lambda kind, key: True) -> dict[str, list]:
    north, south = walk(root, NORTH), walk(root, SOUTH)
    out: dict[str, list] = {name: [] for name in (*LISTS, "alike")}
    for key in sorted(north.keys() | south.keys()):
        if not visible(*key[:2]):
            continue
        mine, theirs = north.get(key), south.get(key)
        if mine and theirs:
            out["alike" if mine[1] == theirs[1] else "differing"].append((key, mine[0], theirs[0]))
        else:
            out["only_in_realm" if mine else "only_in_against"].append((key, (mine or (None,))[0], (theirs or (None,))[0]))
    return out


def got(comparison, name: str) -> list:
    return [(row.key, row.mine.memory_id if row.mine else None, row.theirs.memory_id if row.theirs else None)
            for row in comparison.lists[name].rows]


@pytest.mark.parametrize("posture", sorted(CALLERS))
def test_each_posture_counts_and_lists_only_what_it_may_read(realms, agent_memory_dir, tmp_path, settings, posture):
    access = access_for(Caller(subject=use_caller_posture(settings, tmp_path, posture)))
    want = expected(agent_memory_dir, GRANTS[posture].scope_ok)
    comparison = compare_realms(access=access, realm=NORTH, against=SOUTH, limit=200)
    assert comparison.counts == {name: len(rows) for name, rows in want.items()}
    for name in LISTS:
        assert got(comparison, name) == want[name]
    if posture == "open":  # the fixture's cases, as the docs state them
        assert comparison.counts == {"only_in_realm": 24, "only_in_against": 21, "differing": 25, "alike": 30}


def test_read_in_small_pieces_the_answer_is_the_same(realms, agent_memory_dir, tmp_path, settings, monkeypatch):
    # Scopes read several to a statement and one cut by its hashes, titles by ranges of rowids,
    # hashes looked up a few at a time: pieces this small cut every scope of the fixture.
    monkeypatch.setattr(compare, "CHUNK_RECORDS", 7)
    monkeypatch.setattr(compare, "_LOOKUPS", 3)
    access = access_for(Caller(subject=use_caller_posture(settings, tmp_path, "open")))
    want = expected(agent_memory_dir)
    comparison = compare_realms(access=access, realm=NORTH, against=SOUTH, limit=200)
    assert comparison.counts == {name: len(rows) for name, rows in want.items()}
    for name in LISTS:
        assert got(comparison, name) == want[name]


def test_every_list_pages_each_key_exactly_once(realms, agent_memory_dir, client, signed_in):
    signed_in()
    want = expected(agent_memory_dir)
    block = {"only_in_realm": "compare-only-realm", "only_in_against": "compare-only-against",
             "differing": "compare-differing"}
    for name in LISTS:
        params, seen = {"realm": NORTH, "against": SOUTH, "limit": "3", "list": name}, []
        while True:
            page = client.get(CHANGES, params).content.decode()
            listed = re.search(rf'<ul id="{block[name]}">(.*?)</ul>', page, re.S).group(1)
            seen += [html.unescape(memory_id) for memory_id in re.findall(r'<li data-memory-id="([^"]*)"', listed)]
            assert f'<span data-count="{name}">{len(want[name])} ' in page
            more = re.search(rf'id="compare-more-{block[name].removeprefix("compare-")}" href="\?([^"]*)"', page)
            if more is None:
                break
            params = dict(parse_qsl(html.unescape(more.group(1))))
        column = 2 if name == "only_in_against" else 1
        assert seen == [row[column] for row in want[name]]
        assert len(seen) == len(set(seen))


def test_a_differing_key_shows_its_word_diff(realms, client, signed_in):
    signed_in()
    page = client.get(CHANGES, {"realm": NORTH, "against": SOUTH, "list": "differing", "limit": "1"}).content.decode()
    assert '<del class="diff-removed"><span class="visually-hidden">[removed: </span>low' in page
    assert '<ins class="diff-added"><span class="visually-hidden">[added: </span>high' in page


def test_the_exports_hold_every_difference(realms, agent_memory_dir, client, signed_in):
    signed_in()
    want = expected(agent_memory_dir)
    rows = [(name, *row) for name in LISTS for row in want[name]]
    response = client.get("/console/memory/changes.ndjson", {"realm": NORTH, "against": SOUTH})
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert [(line["difference"], (line["scope_kind"], line["scope_key"], line["title"]), line["record_id"],
             line["against_id"]) for line in lines] == rows
    assert {(line["realm"], line["against"]) for line in lines} == {(NORTH, SOUTH)}
    response = client.get("/console/memory/changes.csv", {"realm": NORTH, "against": SOUTH})
    table = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert table[0] == ["difference", "scope_kind", "scope_key", "title", "realm", "record_id", "against", "against_id"]
    assert [(r[0], (r[1], r[2], r[3]), r[5] or None, r[7] or None) for r in table[1:]] == rows


def test_at_a_moment_the_records_active_then_are_compared(realms, agent_memory_dir, tmp_path, settings):
    access = access_for(Caller(subject=use_caller_posture(settings, tmp_path, "open")))
    now = compare_realms(access=access, realm=NORTH, against=SOUTH, limit=200)
    then = compare_realms(access=access, realm=NORTH, against=SOUTH, limit=200, at_ms=realms["before"])
    late = ("identity", SCOUT, "North only 0.0"), ("identity", SCOUT, "Alike 0.0")
    assert late[0] in [row.key for row in then.lists["only_in_realm"].rows]
    assert late[0] not in [row.key for row in now.lists["only_in_realm"].rows]
    assert late[1] in [row.key for row in now.lists["only_in_against"].rows]
    assert late[1] not in [row.key for row in then.lists["only_in_against"].rows]
    assert then.counts["alike"] == now.counts["alike"]  # one key alike lost, one gained
    assert then.counts["only_in_realm"] == now.counts["only_in_realm"] + 1


@pytest.mark.parametrize("params", [
    {"list": "differing", "cursor": "garbage"},
    {"list": "differing", "cursor": "k1.!!!"},
    {"list": "differing", "cursor": "k1.WyJhIl0"},  # a key of one part
    {"cursor": "k1.WyJhIiwiYiIsImMiXQ"},  # a cursor without its list
    {"list": "everything"},
])
def test_a_bad_cursor_or_list_is_a_400(realms, client, signed_in, params):
    signed_in()
    response = client.get(CHANGES, {"realm": NORTH, "against": SOUTH, **params})
    assert response.status_code == 400


def test_realms_that_are_not_copies_of_one_another_are_refused(realms, client, signed_in, monkeypatch):
    signed_in()
    monkeypatch.setattr(compare, "MAX_UNMATCHED", 20)  # north has 54 records without a twin in south
    response = client.get(CHANGES, {"realm": NORTH, "against": SOUTH})
    assert response.status_code == 400
    assert "differ in more than 20 active records" in response.content.decode()
