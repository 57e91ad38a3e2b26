"""An agent host shipping its realms with a real ``litestream replicate``, and a console host running
``manage.py follow_replicas`` against that replica store (docs/replicas.md).

The agent host's ``litestream.yml`` is the one docs/replicas.md §6 prescribes, written by
``bin/litestream-agent-config``: one ``dbs:`` entry per realm file, each read through a link whose
name has no ``%`` (Litestream opens its database through an SQLite URI, which would decode
``team%3Ablue`` into another file name), replicated to ``<replica>/<encoded realm>.sqlite3``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_panel.replicas import litestream_binary
from memory_panel.simulator.store_writer import agent, identity_scope
from memory_panel.store.realms import REALM_SUFFIX
from tests.support.postures import LEAD, SCOUT
from tests.support.servers import PYTHON, REPO, deployment_env, end_process
from tests.support.written import TAINT, Scribe, new_scribe

LABEL = "east"
# docs/store-format.md §1.1: "team:blue" is written team%3Ablue.sqlite3, the name Litestream mangles.
REALMS = ("default", "team:blue")


def wait_for(check: Callable[[], Any], *, timeout_s: float, what: str, every_s: float = 0.1) -> Any:
    """``check()``'s first truthy answer, polled until ``timeout_s``; fails saying ``what`` was awaited."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = check()
        if answer:
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s:g} s: {what}")
        time.sleep(every_s)


def agent_host_config(persistent_state: Path, replica: Path) -> str:
    """The agent host's litestream.yml, as bin/litestream-agent-config writes it (its links made too)."""
    result = subprocess.run([PYTHON, str(REPO / "bin" / "litestream-agent-config"), str(persistent_state),
                             f"file://{replica}"], capture_output=True, text=True, check=True)
    return result.stdout


@dataclass
class AgentHost:
    """``litestream replicate`` shipping ``agent_memory``'s realms to ``replica``."""

    agent_memory: Path
    replica: Path
    work: Path
    process: subprocess.Popen | None = None

    def start(self) -> AgentHost:
        config = self.work / "litestream.yml"
        config.write_text(agent_host_config(self.agent_memory.parent, self.replica))
        with (self.work / "replicate.log").open("ab") as sink:
            self.process = subprocess.Popen(
                [str(litestream_binary()), "replicate", "-config", str(config)],
                stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        for realm_file in self.agent_memory.glob(f"*{REALM_SUFFIX}"):
            wait_for(lambda: list((self.replica / realm_file.name / "ltx").glob("*/*.ltx")), timeout_s=30,
                     what=f"litestream replicate shipping {realm_file.name}")
        return self

    def restart(self) -> AgentHost:
        """Pick up realm files created since (docs/replicas.md §6: the config names each file)."""
        self.stop()
        return self.start()

    def stop(self) -> None:
        end_process(self.process, timeout=10, sig=signal.SIGINT)
        self.process = None


@dataclass
class ConsoleHost:
    """``manage.py follow_replicas`` keeping ``state``'s copies of ``sources`` current."""

    state: Path
    sources: dict[str, str]
    interval_ms: int = 200
    process: subprocess.Popen | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.state / "follow_replicas.log"

    @property
    def copies(self) -> Path:
        return self.state / "console" / "replicas"

    def start(self) -> ConsoleHost:
        self.state.mkdir(parents=True, exist_ok=True)
        env = deployment_env(self.state, MOBKIT_REPLICA_SOURCES=",".join(f"{k}={v}" for k, v in self.sources.items()),
                             DJANGO_SECRET_KEY="replica-tests")
        with self.log.open("ab") as sink:
            self.process = subprocess.Popen(
                [PYTHON, "manage.py", "follow_replicas", "--follow-interval-ms", str(self.interval_ms)],
                cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        return self

    def status(self) -> dict[str, Any] | None:
        try:
            return json.loads((self.copies / "followers.json").read_text())
        except (OSError, ValueError):
            return None

    def follower_pid(self, realm: str) -> int | None:
        status = self.status() or {}
        return (status.get("copies", {}).get(realm) or {}).get("pid")

    def stop(self) -> None:
        end_process(self.process, timeout=15)
        self.process = None


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


@dataclass
class Hosts:
    """The agent host's scribes (``scribes["team:blue"]`` writes there and keeps the account of
    every row), its ``litestream replicate`` and the console host's ``follow_replicas``."""

    scribes: dict[str, Scribe]
    agent: AgentHost
    console: ConsoleHost
    source_url: str

    def stop(self) -> None:
        self.console.stop()
        self.agent.stop()
        for scribe in self.scribes.values():
            scribe.writer.close()


def hosts_start(base: Path, *, notes: int = 6) -> Hosts:
    """``REALMS`` written on an agent host (one quarantined note each), shipped, and followed as ``LABEL``."""
    agent_memory = base / "agent" / "agent-memory"
    agent_memory.mkdir(parents=True)
    scribes: dict[str, Scribe] = {}
    for realm in REALMS:
        scribe = scribes[realm] = new_scribe(agent_memory, realm)
        for i in range(notes):
            key, quarantined = LEAD if i % 2 else SCOUT, i == 4
            scribe.remember(identity_scope(realm, key), f"{realm} note {i}", f"{realm} body {i}",
                            author=agent(key) if quarantined else {"author": "application"},
                            gate_reason=TAINT if quarantined else None)
    replica = base / "replica"
    agent_host = AgentHost(agent_memory, replica, base / "agent").start()
    source_url = f"file://{replica}"
    hosts = Hosts(scribes, agent_host, ConsoleHost(base / "console-state", {LABEL: source_url}).start(), source_url)
    try:
        for realm in REALMS:
            wait_for(lambda: hosts.console.follower_pid(f"{LABEL}/{realm}"), timeout_s=30,
                     what=f"follow_replicas following {LABEL}/{realm}")
    except BaseException:
        hosts.stop()
        raise
    return hosts
