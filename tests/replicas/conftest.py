"""Replica fixtures: one agent host shipping real realm files with ``litestream replicate`` and one
console host running ``follow_replicas`` on them, shared by a module (each start costs seconds).

- ``hosts`` → ``Hosts``: the agent host's scribes (``hosts.scribes["team:blue"]`` writes there and
  keeps the account of every row), the running ``AgentHost`` and ``ConsoleHost``.
- ``replica_console`` → the console in this process pointed at the console host's state, with
  source ``east`` configured and a local realm ``local`` beside the copies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory_panel.simulator.store_writer import agent, identity_scope
from tests.support.litestream import AgentHost, ConsoleHost, wait_for
from tests.support.postures import LEAD, SCOUT
from tests.support.worlds import write_notes
from tests.support.written import TAINT, Scribe, new_scribe

LABEL = "east"
# docs/store-format.md §1.1: "team:blue" is written team%3Ablue.sqlite3, the name Litestream mangles.
REALMS = ("default", "team:blue")


@dataclass
class Hosts:
    scribes: dict[str, Scribe]
    agent: AgentHost
    console: ConsoleHost
    source_url: str


@pytest.fixture(scope="module")
def hosts(tmp_path_factory) -> Iterator[Hosts]:
    base = tmp_path_factory.mktemp("replicas")
    agent_memory = base / "agent" / "agent-memory"
    agent_memory.mkdir(parents=True)
    scribes: dict[str, Scribe] = {}
    for realm in REALMS:
        scribe = scribes[realm] = new_scribe(agent_memory, realm)
        for i in range(6):
            key, quarantined = LEAD if i % 2 else SCOUT, i == 4
            scribe.remember(identity_scope(realm, key), f"{realm} note {i}", f"{realm} body {i}",
                            author=agent(key) if quarantined else {"author": "application"},
                            gate_reason=TAINT if quarantined else None)
    replica = base / "replica"
    agent_host = AgentHost(agent_memory, replica, base / "agent").start()
    source_url = f"file://{replica}"
    console = ConsoleHost(base / "console-state", {LABEL: source_url}).start()
    try:
        for realm in REALMS:
            wait_for(lambda: console.follower_pid(f"{LABEL}/{realm}"), timeout_s=30,
                     what=f"follow_replicas following {LABEL}/{realm}")
        yield Hosts(scribes, agent_host, console, source_url)
    finally:
        console.stop()
        agent_host.stop()
        for scribe in scribes.values():
            scribe.writer.close()


@pytest.fixture
def replica_console(hosts: Hosts, settings, tmp_path: Path) -> Hosts:
    settings.MOBKIT_PERSISTENT_STATE = hosts.console.state
    settings.MOBKIT_AGENT_MEMORY_ROOT = tmp_path / "agent-memory"
    settings.MOBKIT_REPLICA_SOURCES = {LABEL: hosts.source_url}
    settings.MOBKIT_ACCESS_CONFIG = None
    write_notes(tmp_path / "agent-memory", "local", 2)
    return hosts
