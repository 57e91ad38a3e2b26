"""The history file the console keeps per realm (docs/history.md §3): the same answers as replaying
the audit rows afresh, caught up after new writes, replayed again when the realm file is replaced,
keyset pages that neither skip nor repeat, and a page that says so while a large realm is replayed."""

from __future__ import annotations

import html
import os
import re
import sqlite3
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from memory_panel.simulator.store_writer import ManualClock, StoreWriter, identity_scope
from memory_panel.store import history_file
from memory_panel.store.console_index.builds import BackgroundRuns
from memory_panel.store.history import Change, audit_sql, op_changes
from memory_panel.store.realms import realm_path
from tests.support.history import HOUR_MS, LUKA, REALM, START, Script, iso, row_statuses

pytestmark = pytest.mark.django_db

RECORDS = "/console/memory/records/"
CHANGES = "/console/memory/changes/"
_MORE = re.compile(r'<a class="button" href="\?([^"]*)">Load more</a>')
_CHANGE_ROW = re.compile(r'<tr data-memory-id="([^"]*)" data-change="([^"]*)">')


def replayed_afresh(path: Path) -> list[Change]:
    """Every change, replayed from the audit rows in memory: what the history file must agree with."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(audit_sql(True), (0, 1 << 62)).fetchall()
    finally:
        conn.close()
    changes, last = [], 0
    for row in rows:
        last = max(last, row[3])
        changes += op_changes(row[0], row[1], row[2], last, *row[4:9])
    return changes


def state_at(changes: list[Change], at_ms: int) -> dict[str, tuple[int, str, str | None]]:
    return {c.memory_id: (c.at_ms, c.status, c.status_detail) for c in changes if c.at_ms <= at_ms}


def test_the_history_file_answers_as_a_fresh_replay(script: Script):
    changes = replayed_afresh(realm_path(REALM))
    moments = sorted({at for at in script.steps.values()} | {at + HOUR_MS // 2 for at in script.steps.values()})
    with history_file.realm_history(REALM) as history:
        for at_ms in [script.steps["create"] - 1, *moments]:
            kept = {s.memory_id: (s.from_ms, s.status, s.status_detail) for s in history.standing_at(at_ms)}
            assert kept == state_at(changes, at_ms)
            counted = {}
            for group in history.groups_at(at_ms):
                counted[group.status] = counted.get(group.status, 0) + group.records
            expected = {}
            for _, status, _ in state_at(changes, at_ms).values():
                expected[status] = expected.get(status, 0) + 1
            assert counted == expected
        first, last = script.steps["create"] - 1, moments[-1]
        between = [(s.from_ms, s.memory_id, s.change, s.other_id) for s in history.changes_between(first, last)]
        assert between == sorted((c.at_ms, c.memory_id, c.kind, c.other_id) for c in changes)
        by_change = {}
        for group in history.change_groups(first, last):
            by_change[group.change] = by_change.get(group.change, 0) + group.records
        assert by_change == {"added": 3, "superseded": 1, "quarantined": 1, "released": 1, "tombstoned": 1}


def test_new_writes_are_caught_up_not_replayed_again(client, signed_in, script: Script, agent_memory_dir: Path):
    signed_in()
    later = iso(script.steps["tombstone"] + 10 * HOUR_MS)
    before = row_statuses(client.get(RECORDS, {"as_of": later}).content.decode())
    path = history_file.HISTORY.path(REALM)
    spans_before = _spans(path)
    clock = ManualClock(script.steps["tombstone"] + HOUR_MS)
    with StoreWriter.open(REALM, root=agent_memory_dir, clock=clock) as writer:
        note = writer.remember(identity_scope(REALM, LUKA), "Hut opens in May", "The hut opens on the first of May.")
        writer.supersede(script.released, "Summit closed on Friday", "Closed on Friday and Saturday.")
    after = row_statuses(client.get(RECORDS, {"as_of": later}).content.decode())
    new_version = next(memory_id for memory_id in after if memory_id not in before and memory_id != note)
    assert after == {**before, note: "active", script.released: "superseded", new_version: "active"}
    spans_after = _spans(path)
    # The spans kept before are kept (the released record's own span closed): no replay from nothing.
    assert [s[:3] for s in spans_after[: len(spans_before)]] == [s[:3] for s in spans_before]
    assert len(spans_after) == len(spans_before) + 3  # the note, the new version, the prior superseded
    # The moment before the writes is as it was.
    assert row_statuses(client.get(RECORDS, {"as_of": script.between("tombstone")}).content.decode()) == before


def _spans(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT from_ms, record, n, to_ms FROM spans ORDER BY from_ms, record, n").fetchall()
    finally:
        conn.close()


def test_a_replaced_realm_file_is_replayed_again(client, signed_in, script: Script, agent_memory_dir: Path,
                                                 tmp_path: Path):
    signed_in()
    later = iso(script.steps["tombstone"] + 10 * HOUR_MS)
    assert script.route_v1 in row_statuses(client.get(RECORDS, {"as_of": later}).content.decode())
    other_root = tmp_path / "other"
    other_root.mkdir()
    clock = ManualClock(int(START.timestamp() * 1000))
    with StoreWriter.create(REALM, root=other_root, clock=clock) as writer:
        only = writer.remember(identity_scope(REALM, LUKA), "Another history", "Nothing of the first file.")
    os.replace(other_root / realm_path(REALM).name, realm_path(REALM))
    assert row_statuses(client.get(RECORDS, {"as_of": later}).content.decode()) == {only: "active"}


def _many(agent_memory_dir: Path) -> int:
    """26 records, several to a batch (so many share a moment), some superseded and tombstoned."""
    clock = ManualClock(int(START.timestamp() * 1000))
    scope = identity_scope(REALM, LUKA)
    with StoreWriter.create(REALM, root=agent_memory_dir, clock=clock) as writer:
        ids = []
        for n in range(20):
            ids.append(writer.remember(scope, f"Note {n}", f"Body {n}."))
            if n % 3 == 0:
                clock.advance(60_000)
        for n in range(0, 12, 2):
            writer.supersede(ids[n], f"Note {n}", f"Body {n}, revised.")
        writer.forget(ids[1])
        return clock.advance(60_000)


def _walk(client, path: str, params: dict[str, str], pattern: re.Pattern) -> list[str]:
    seen, query = [], params
    while True:
        page = client.get(path, query).content.decode()
        seen += [html.unescape(match[0]) + "|" + match[1] for match in pattern.findall(page)]
        more = _MORE.search(page)
        if more is None:
            return seen
        query = dict(parse_qsl(html.unescape(more.group(1))))


def test_keyset_pages_neither_skip_nor_repeat(client, signed_in, agent_memory_dir: Path):
    end = _many(agent_memory_dir)
    signed_in()
    row = re.compile(r'<tr data-memory-id="([^"]*)" data-status="([^"]*)">')
    whole = _walk(client, RECORDS, {"as_of": iso(end), "limit": "200"}, row)
    assert len(whole) == 26
    for limit in ("1", "4", "7"):
        assert _walk(client, RECORDS, {"as_of": iso(end), "limit": limit}, row) == whole
    window = {"from": iso(int(START.timestamp() * 1000) - 1000), "to": iso(end)}
    every = _walk(client, CHANGES, {**window, "limit": "200"}, _CHANGE_ROW)
    assert len(every) == 26 + 6 + 1  # every version added, six superseded, one tombstoned
    for limit in ("1", "5"):
        assert _walk(client, CHANGES, {**window, "limit": limit}, _CHANGE_ROW) == every


def test_a_large_backlog_is_replayed_in_the_background_and_the_page_says_so(client, signed_in, script: Script,
                                                                            settings, monkeypatch):
    settings.MOBKIT_REALM_INDEX_BACKGROUND = True
    monkeypatch.setattr(history_file.HISTORY, "inline_rows", 2)
    # A replay that has not got anywhere yet: what a page sees while a large realm is replayed.
    monkeypatch.setattr(history_file, "_background", BackgroundRuns("history replay", lambda realm: None))
    signed_in()
    response = client.get(RECORDS, {"as_of": script.between("create"), "realm": REALM})
    assert response.status_code == 503
    page = response.content.decode()
    assert "is being indexed" in page and "replaying the audit rows (0 of 6 rows copied)" in page
    assert response["Retry-After"]
    monkeypatch.setattr(history_file.HISTORY, "inline_rows", 20_000)
    assert client.get(RECORDS, {"as_of": script.between("create"), "realm": REALM}).status_code == 200


def test_a_write_that_disagrees_with_its_audit_row_is_refused_once_caught_up(client, signed_in, script: Script,
                                                                             agent_memory_dir: Path):
    signed_in()
    later = iso(script.steps["tombstone"] + 10 * HOUR_MS)
    assert client.get(RECORDS, {"as_of": later}).status_code == 200
    clock = ManualClock(script.steps["tombstone"] + HOUR_MS)
    with StoreWriter.open(REALM, root=agent_memory_dir, clock=clock) as writer:
        note = writer.remember(identity_scope(REALM, LUKA), "Hut opens in May", "The hut opens on the first of May.")
    conn = sqlite3.connect(realm_path(REALM))
    with conn:  # a hand edit: the audit row says the note was written active
        conn.execute("UPDATE records SET status_kind = 'tombstoned' WHERE memory_id = ?", (note,))
    conn.close()
    response = client.get(RECORDS, {"as_of": later})
    assert response.status_code == 409
    assert "1 record(s) stand otherwise than their audit rows say" in response.content.decode()


def _shared_moment(agent_memory_dir: Path) -> int:
    """Two realms whose every change is at one millisecond: in each, records written and superseded
    at once, half of the new versions tombstoned too, so a record changes twice at that moment."""
    clock = ManualClock(int(START.timestamp() * 1000))
    for realm in (REALM, "second"):
        scope = identity_scope(realm, LUKA)
        with StoreWriter.create(realm, root=agent_memory_dir, clock=clock) as writer:
            for n in range(4):
                first = writer.remember(scope, f"Note {n}", f"Body {n}.")
                second = writer.supersede(first, f"Note {n}", f"Body {n}, revised.")
                if n % 2:
                    writer.forget(second)
    return clock()


def test_changes_sharing_a_moment_are_each_listed_once_across_pages(client, signed_in, agent_memory_dir: Path):
    moment = _shared_moment(agent_memory_dir)
    signed_in()
    window = {"from": iso(moment - 1000), "to": iso(moment + 1000)}
    every = _walk(client, CHANGES, {**window, "limit": "200"}, _CHANGE_ROW)
    # Per realm: four written, four new versions, four priors superseded, two tombstoned.
    assert len(every) == 2 * (4 + 4 + 4 + 2)
    assert len(set(every)) == len(every)
    for limit in ("1", "2", "3", "5"):
        assert _walk(client, CHANGES, {**window, "limit": limit}, _CHANGE_ROW) == every
    row = re.compile(r'<tr data-memory-id="([^"]*)" data-status="([^"]*)">')
    standing = _walk(client, RECORDS, {"as_of": iso(moment), "limit": "200"}, row)
    assert len(standing) == len(set(standing)) == 2 * 8
    for limit in ("1", "3"):
        assert _walk(client, RECORDS, {"as_of": iso(moment), "limit": limit}, row) == standing


@pytest.mark.parametrize("path", [RECORDS, CHANGES])
@pytest.mark.parametrize("cursor, message", [
    ("1793613600000:mem-1", "cursor from an older version of this page"),
    ("m1.1793613600000.x.0.default", "malformed cursor"),
    ("m1.1793613600000.1.0.", "malformed cursor"),
    ("m1.99999999999999999999.1.0.default", "malformed cursor"),
])
def test_a_cursor_these_pages_did_not_give_is_a_clear_400(client, signed_in, script: Script, path, cursor, message):
    signed_in()
    params = {"as_of": script.between("create")} if path == RECORDS else {
        "from": script.before(), "to": script.between("tombstone")}
    response = client.get(path, {**params, "cursor": cursor})
    assert response.status_code == 400
    assert message in html.unescape(response.content.decode())


def test_a_file_kept_by_an_older_console_is_replayed_again(client, signed_in, script: Script,
                                                          agent_memory_dir: Path):
    signed_in()
    later = iso(script.steps["tombstone"] + 10 * HOUR_MS)
    shown = row_statuses(client.get(RECORDS, {"as_of": later}).content.decode())
    conn = sqlite3.connect(history_file.HISTORY.path(REALM))
    with conn:  # the tables of the first version: spans keyed by the record's text id
        conn.execute("DROP TABLE spans")
        conn.execute("CREATE TABLE spans (from_ms INTEGER NOT NULL, memory_id TEXT NOT NULL, seq INTEGER NOT NULL,"
                     " PRIMARY KEY (from_ms, memory_id, seq)) WITHOUT ROWID")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()
    clock = ManualClock(script.steps["tombstone"] + HOUR_MS)
    with StoreWriter.open(REALM, root=agent_memory_dir, clock=clock) as writer:
        note = writer.remember(identity_scope(REALM, LUKA), "Hut opens in May", "The hut opens on the first of May.")
    assert row_statuses(client.get(RECORDS, {"as_of": later}).content.decode()) == {**shown, note: "active"}


def test_a_history_opened_before_a_catch_up_reads_the_scopes_it_numbered(script: Script, agent_memory_dir: Path):
    with history_file.realm_history(REALM) as history:
        clock = ManualClock(script.steps["tombstone"] + HOUR_MS)
        with StoreWriter.open(REALM, root=agent_memory_dir, clock=clock) as writer:
            note = writer.remember(identity_scope(REALM, "identity:nora"), "Nora's route", "Nora takes the west ridge.")
        history_file.HISTORY.catch_up(REALM)  # another process's page, between two reads of this one
        standing = {span.memory_id: span.scope_key for span in history.standing_at(clock() + HOUR_MS)}
        counted = {group.scope_key for group in history.groups_at(clock() + HOUR_MS)}
    assert standing[note] == "identity:nora" and "identity:nora" in counted
