"""Other hosts' realms in one console: a real ``litestream replicate`` on an agent host, a real
``follow_replicas`` on the console host, and the console serving the copies as ``<label>/<realm>``
(docs/replicas.md)."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from channels.db import database_sync_to_async

from memory_panel.selectors import replicas as replica_selectors
from memory_panel.simulator.store_writer import agent, identity_scope
from memory_panel.store.realms import forget_realm_connections, realm_names, replica_txid
from mobkit_console.timeline.watcher import RealmWatcher
from tests.support.litestream import LABEL, Hosts, kill, wait_for
from tests.support.postures import LEAD, SCOUT
from tests.support.rpc import panel
from tests.support.sockets import open_socket, receive_events, token_for
from tests.support.written import TAINT, new_scribe, newest_first, reviewer_only

pytestmark = pytest.mark.django_db

# The promise: a write on the agent host is on the console within this long.
VISIBLE_WITHIN_S = 15


def served(console, realm: str) -> list[dict]:
    try:
        return panel(console, "records", {"realm": realm, "limit": 100}).result["records"]
    finally:
        # A server closes realm connections after each request (CONN_MAX_AGE 0); Django's test
        # client does not, and a copy held open across requests would stall its follower.
        forget_realm_connections()


def expected(hosts: Hosts, realm: str) -> list[dict]:
    rows = newest_first(hosts.scribes[realm].rows.values())
    return [replace(row, realm=f"{LABEL}/{realm}").list_row() for row in rows]


def remember_on_agent_host(hosts: Hosts, realm: str, title: str, *, quarantined: bool = False) -> str:
    return hosts.scribes[realm].remember(
        identity_scope(realm, LEAD), title, f"{title} body",
        author=agent(LEAD) if quarantined else {"author": "application"},
        gate_reason=TAINT if quarantined else None,
    ).id


def visible(console, realm: str, memory_id: str) -> bool:
    """Served yet? The realm itself must be served all along, through restarts (docs/replicas.md §3)."""
    return any(row["id"] == memory_id for row in served(console, realm))


def test_replica_realms_are_listed_beside_local_ones_by_qualified_name(replica_console: Hosts):
    assert realm_names() == ["east/default", "east/team:blue", "local"]


def test_every_row_of_every_replica_realm_is_served(replica_console: Hosts, console):
    for realm in ("default", "team:blue"):
        assert served(console, f"{LABEL}/{realm}") == expected(replica_console, realm)


def test_the_percent_encoded_realm_is_followed_and_no_decoded_file_appears(replica_console: Hosts, console):
    # Litestream in directory mode opens team%3Ablue.sqlite3 as team:blue.sqlite3 and creates it.
    assert not (replica_console.agent.agent_memory / "team:blue.sqlite3").exists()
    memory_id = remember_on_agent_host(replica_console, "team:blue", "Blue team moved camp")
    wait_for(lambda: visible(console, "east/team:blue", memory_id), timeout_s=VISIBLE_WITHIN_S,
             what="the new east/team:blue record served")
    assert served(console, "east/team:blue") == expected(replica_console, "team:blue")


def test_a_later_write_is_served_within_15_seconds(replica_console: Hosts, console):
    written = time.monotonic()
    memory_id = remember_on_agent_host(replica_console, "default", "Rope checked at dawn")
    wait_for(lambda: visible(console, "east/default", memory_id), timeout_s=VISIBLE_WITHIN_S,
             what="the new east/default record served")
    assert time.monotonic() - written < VISIBLE_WITHIN_S


def test_an_unknown_label_or_realm_is_the_callers_error(replica_console: Hosts, console):
    for name in ("west/default", "east/nowhere"):
        reply = panel(console, "records", {"realm": name})
        assert reply.status == 200 and reply.error["code"] != -32603, reply.body


def test_a_follower_that_dies_is_restarted_and_catches_up(replica_console: Hosts, console):
    realm = "east/default"
    first = replica_console.console.follower_pid(realm)
    kill(first)
    wait_for(lambda: replica_console.console.follower_pid(realm) not in (None, first), timeout_s=VISIBLE_WITHIN_S,
             what="follow_replicas starting the killed follower again")
    memory_id = remember_on_agent_host(replica_console, "default", "Stove refuelled")
    wait_for(lambda: visible(console, realm, memory_id), timeout_s=VISIBLE_WITHIN_S,
             what="a write after the restart served")
    assert served(console, realm) == expected(replica_console, "default")


def test_a_restarted_follow_replicas_restores_afresh_and_the_stop_is_flagged(
    replica_console: Hosts, console, monkeypatch
):
    monkeypatch.setattr(replica_selectors, "STATUS_SILENT_S", 1.0)
    replica_console.console.stop()
    memory_id = remember_on_agent_host(replica_console, "default", "Written while the console host was down")
    time.sleep(1.5)
    response = console.get("/console/replicas/health")
    assert response.status_code == 503
    answer = response.json()
    assert answer["ok"] is False and set(answer["stale"]) == {"east/default", "east/team:blue"}
    assert all("stopped reporting" in lag["problem"] for lag in answer["replicas"])

    replica_console.console.start()  # 0.5.17 refuses to resume past its newest snapshot: restored afresh
    wait_for(lambda: visible(console, "east/default", memory_id), timeout_s=VISIBLE_WITHIN_S,
             what="the write made while follow_replicas was down served")
    assert served(console, "east/default") == expected(replica_console, "default")
    wait_for(lambda: console.get("/console/replicas/health").status_code == 200, timeout_s=VISIBLE_WITHIN_S,
             what="the health answer back to 200")


def test_health_and_holdings_say_how_current_each_copy_is(replica_console: Hosts, console):
    remember_on_agent_host(replica_console, "team:blue", "Lag probe")
    wait_for(lambda: (replica_txid("east/team:blue") or (0,))[0] >= 2, timeout_s=VISIBLE_WITHIN_S,
             what="the copy applying the write")
    def current():  # the source is listed on a thread of its own: its newest TXID may trail the copy's a moment
        answer = console.get("/console/replicas/health")
        return answer.status_code == 200 and all(
            lag["txid"] == lag["source_txid"] for lag in answer.json()["replicas"]) and answer.json()

    answer = wait_for(current, timeout_s=VISIBLE_WITHIN_S, what="every copy current, its source listed since")
    lags = {lag["realm"]: lag for lag in answer["replicas"]}
    assert set(lags) == {"east/default", "east/team:blue"}  # local realms have no lag
    for lag in lags.values():
        assert lag["follower"] == "following" and lag["stale"] is False and lag["problem"] is None
        assert lag["txid"] == lag["source_txid"]
        assert lag["age_ms"] < 5000
    page = console.get("/console/memory/").content.decode()
    assert page.count("A copy of host <code>east</code>") == 2
    assert "not following" not in page


@pytest.mark.django_db(transaction=True)
def test_watching_the_copies_does_not_stall_their_followers(replica_console: Hosts, console):
    # A reader holding a copy open makes Litestream wait (35-45 s measured): the watcher must not.
    stop = threading.Event()

    def watch() -> None:
        watcher = RealmWatcher(broadcast=lambda rows: None)
        try:
            while not stop.is_set():
                watcher.poll_once()
                stop.wait(0.05)
        finally:
            watcher.close()

    watching = threading.Thread(target=watch)
    watching.start()
    try:
        for i in range(3):
            memory_id = remember_on_agent_host(replica_console, "default", f"Watched write {i}")
            wait_for(lambda: visible(console, "east/default", memory_id), timeout_s=VISIBLE_WITHIN_S,
                     what=f"write {i} served while the watcher polls")
    finally:
        stop.set()
        watching.join()


@pytest.mark.django_db(transaction=True)
async def test_a_quarantined_write_reaches_reviewers_sockets_with_the_qualified_realm(replica_console: Hosts):
    socket = await open_socket("/ws/console/events/", token=await token_for("admin@example.test"))
    watcher = RealmWatcher()
    await database_sync_to_async(watcher.poll_once)()  # the copies' current ends: no backfill
    memory_id = await asyncio.to_thread(remember_on_agent_host, replica_console, "default", "Wire the deposit",
                                        quarantined=True)
    deadline = time.monotonic() + VISIBLE_WITHIN_S
    found = []
    while not found and time.monotonic() < deadline:
        await database_sync_to_async(watcher.poll_once)()
        frames = await receive_events(socket, quiet_s=0.2)
        found = [f["event"] for f in frames if f["type"] == "event" and f["event"]["event_type"] == "memory.write.quarantined"]
    await database_sync_to_async(watcher.close)()
    await socket.disconnect()
    assert found, "no memory.write.quarantined event within 15 s"
    assert found[0]["data"]["realm"] == "east/default"
    assert found[0]["data"]["scope_key"] == LEAD
    assert memory_id


def test_every_surface_names_the_replica_realm_by_its_qualified_name(replica_console: Hosts, console):
    realm = "east/team:blue"
    try:
        switched = console.post("/console/memory/realm/", {"realm": realm, "next": "/console/memory/records/"})
        assert switched.status_code == 303
        page = console.get("/console/memory/records/").content.decode()
        assert "team:blue note 5" in page and "default note 5" not in page  # the switcher's realm only
        assert '<option value="east/team:blue" selected' in page or 'value="east/team:blue"' in page
        csv = b"".join(console.get("/console/memory/records.csv", {"realm": realm}).streaming_content).decode()
        assert "east/team:blue" in csv and "team:blue note 3" in csv
        found = panel(console, "search", {"query": "note 3", "realm": realm}).result
        assert found["realms"] == [realm]
        assert [row["title"] for row in found["records"]] == ["team:blue note 3"]
        listing = console.get("/console/").content.decode()
        assert all(name in listing for name in ("east/default", "east/team:blue", "local"))
    finally:
        forget_realm_connections()


def test_access_toml_grants_the_same_scopes_in_a_replica_realm(replica_console: Hosts, console, posture):
    posture("scout_only")  # everyone reads identity:scout alone, and no one reviews quarantine
    rows = newest_first(replica_console.scribes["default"].rows.values())
    want = [replace(row, realm="east/default").list_row() for row in rows
            if row.scope_key == SCOUT and not reviewer_only(row)]
    assert want and served(console, "east/default") == want


def test_a_realm_that_appears_later_on_the_agent_host_is_followed(replica_console: Hosts, console, tmp_path):
    agent_memory = replica_console.agent.agent_memory
    later = new_scribe(agent_memory, "ops:night")
    try:
        row = later.remember(identity_scope("ops:night", LEAD), "Night shift handover", "Keys under the mat.")
        # docs/replicas.md §6: the agent host's script writes a new configuration and restarts Litestream.
        replica_console.agent.wait_shipped("ops%3Anight.sqlite3")
        wait_for(lambda: "east/ops:night" in realm_names(), timeout_s=VISIBLE_WITHIN_S,
                 what="follow_replicas picking up east/ops:night")
        wait_for(lambda: visible(console, "east/ops:night", row.id), timeout_s=VISIBLE_WITHIN_S,
                 what="the new realm's record served")
    finally:
        later.writer.close()


def test_litestream_dying_on_the_agent_host_is_started_again_and_ships_on(replica_console: Hosts, console):
    agent_host = replica_console.agent
    children = Path(f"/proc/{agent_host.process.pid}/task/{agent_host.process.pid}/children")
    first = int(children.read_text().split()[0])
    kill(first)
    wait_for(lambda: children.read_text().split() not in ([], [str(first)]), timeout_s=VISIBLE_WITHIN_S,
             what="bin/litestream-agent-config --run starting litestream replicate again")
    memory_id = remember_on_agent_host(replica_console, "team:blue", "Shipped after the agent's Litestream died")
    wait_for(lambda: visible(console, "east/team:blue", memory_id), timeout_s=VISIBLE_WITHIN_S,
             what="a write after the agent host's restart served")


@pytest.mark.django_db(transaction=True)
def test_the_timeline_tells_each_write_once_across_a_follower_restart(replica_console: Hosts):
    watcher = RealmWatcher(broadcast=lambda rows: None)
    told: list[str] = []

    def poll_until(memory_id: str) -> None:
        def seen() -> bool:
            told.extend(event.data.get("record_id") for event in watcher.poll_once())
            return memory_id in told
        wait_for(seen, timeout_s=VISIBLE_WITHIN_S, what=f"{memory_id} on the timeline", every_s=0.2)

    try:
        watcher.poll_once()  # the copies' current ends
        before = remember_on_agent_host(replica_console, "default", "Before the restart")
        poll_until(before)
        first = replica_console.console.follower_pid("east/default")
        kill(first)
        wait_for(lambda: (lambda s: s and s["copies"]["east/default"]["state"] == "following"
                          and s["copies"]["east/default"]["pid"] != first)(replica_console.console.status()),
                 timeout_s=VISIBLE_WITHIN_S, what="the follower following again")
        after = remember_on_agent_host(replica_console, "default", "After the restart")
        poll_until(after)
        for _ in range(5):  # a few more polls: nothing is told again from the new copy
            told.extend(event.data.get("record_id") for event in watcher.poll_once())
            time.sleep(0.2)
    finally:
        watcher.close()
    assert told.count(before) == 1 and told.count(after) == 1, told
