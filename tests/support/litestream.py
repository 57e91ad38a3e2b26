"""An agent host shipping its realms with a real ``litestream replicate``, and a console host running
``manage.py follow_replicas`` against that replica store (docs/replicas.md).

The agent host's ``litestream.yml`` is the one docs/replicas.md §6 prescribes: one ``dbs:`` entry
per realm file, each read through a link whose name has no ``%`` (Litestream opens its database
through an SQLite URI, which would decode ``team%3Ablue`` into another file name), replicated to
``<replica>/<encoded realm>.sqlite3``.
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
from memory_panel.store.realms import REALM_SUFFIX
from tests.support.servers import PYTHON, REPO, deployment_env


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


def link_name(file_name: str) -> str:
    """docs/replicas.md §6: the realm file's name with each '%' written '='; SQLite decodes no '='."""
    return file_name.replace("%", "=")


def agent_host_config(agent_memory: Path, links: Path, replica: Path) -> str:
    """The agent host's litestream.yml for every realm file now in ``agent_memory`` (links made too)."""
    links.mkdir(parents=True, exist_ok=True)
    entries = []
    for realm_file in sorted(agent_memory.glob(f"*{REALM_SUFFIX}")):
        link = links / link_name(realm_file.name)
        for suffix in ("", "-wal"):  # Litestream reads the WAL by its own name, beside the link
            target = link.with_name(link.name + suffix)
            if not target.is_symlink():
                target.symlink_to(realm_file.with_name(realm_file.name + suffix))
        entries.append(f"  - path: {link}\n    replica:\n      type: file\n      path: {replica / realm_file.name}\n")
    return "dbs:\n" + "".join(entries)


@dataclass
class AgentHost:
    """``litestream replicate`` shipping ``agent_memory``'s realms to ``replica``."""

    agent_memory: Path
    replica: Path
    work: Path
    process: subprocess.Popen | None = None

    def start(self) -> AgentHost:
        config = self.work / "litestream.yml"
        config.write_text(agent_host_config(self.agent_memory, self.work / "links", self.replica))
        self.process = subprocess.Popen(
            [str(litestream_binary()), "replicate", "-config", str(config)],
            stdout=open(self.work / "replicate.log", "ab"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
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
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
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
        self.process = subprocess.Popen(
            [PYTHON, "manage.py", "follow_replicas", "--follow-interval-ms", str(self.interval_ms)],
            cwd=REPO, env=env, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
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
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
