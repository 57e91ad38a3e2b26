"""An agent host shipping its realms with a real ``litestream replicate``, and a console host running
``manage.py follow_replicas`` against that replica store (docs/replicas.md).

The store is real too, each kind on loopback: a directory (``file://``), moto's S3 server
(``s3://…?endpoint=``) or an asyncssh SFTP server (``sftp://``), each started here.

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
from tests.support.servers import PYTHON, REPO, deployment_env, end_process, free_port
from tests.support.written import TAINT, Scribe, new_scribe

STORES = ("file", "s3", "sftp")
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


@dataclass
class ReplicaStore:
    """Where the agent host ships and the console host lists: ``url`` plus the environment both
    sides need to reach it (credentials; for SFTP, a home whose known_hosts vouches for the server)."""

    kind: str
    url: str
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None
    endpoint: str | None = None  # an S3 store's http:// address, for a test's own boto3 client

    def environ(self, base: dict[str, str]) -> dict[str, str]:
        # Litestream 0.5.17's S3 client fails outright when AWS_CA_BUNDLE is set (docs/replicas.md §2).
        return {**{k: v for k, v in base.items() if k != "AWS_CA_BUNDLE"}, **self.env}

    def s3_client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="replica-tests", aws_secret_access_key="replica-tests")

    def stop(self) -> None:
        end_process(self.process, timeout=10)


def _started(process: subprocess.Popen, log: Path, ready: Callable[[], bool], what: str) -> None:
    try:
        wait_for(lambda: ready() or process.poll() is not None, timeout_s=30, what=what)
    finally:
        if process.poll() is not None:
            raise AssertionError(f"{what}: exited with {process.returncode}: {log.read_text()[-2000:]}")


def store_start(kind: str, base: Path) -> ReplicaStore:
    """A replica store of ``kind`` ("file", "s3" or "sftp") under ``base``, running if it is a server."""
    if kind == "file":
        (base / "replica").mkdir(parents=True)
        return ReplicaStore(kind, f"file://{base / 'replica'}")
    port = free_port()
    log = base / f"{kind}-server.log"
    if kind == "s3":
        credentials = {"AWS_ACCESS_KEY_ID": "replica-tests", "AWS_SECRET_ACCESS_KEY": "replica-tests"}
        with log.open("ab") as sink:
            process = subprocess.Popen([PYTHON, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                       stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        store = ReplicaStore(kind, f"s3://mobkit/agents/east?endpoint=127.0.0.1:{port}&region=us-east-1",
                             credentials, process, endpoint=f"http://127.0.0.1:{port}")
        _started(process, log, lambda: b"Running on" in log.read_bytes(), "moto's S3 server")
        store.s3_client().create_bucket(Bucket="mobkit")
        return store
    if kind == "sftp":
        root, home = base / "sftp-root", base / "home"
        (root / "agents").mkdir(parents=True)
        (home / ".ssh").mkdir(parents=True)
        host_key = base / "sftp_host_key"
        with log.open("ab") as sink:
            process = subprocess.Popen(
                [PYTHON, str(Path(__file__).with_name("sftp_server.py")), str(root), str(port), "mob",
                 "p@ss:word", str(host_key)],
                stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        store = ReplicaStore(kind, f"sftp://mob:p%40ss%3Aword@127.0.0.1:{port}/agents/east", {"HOME": str(home)},
                             process)
        _started(process, log, lambda: b"listening" in log.read_bytes(), "the SFTP server")
        public = host_key.with_name(host_key.name + ".pub").read_text().split()
        (home / ".ssh" / "known_hosts").write_text(f"[127.0.0.1]:{port} {public[0]} {public[1]}\n")
        return store
    raise ValueError(f"no replica store of kind {kind!r}")


@dataclass
class AgentHost:
    """``bin/litestream-agent-config --run`` shipping ``agent_memory``'s realms to ``store``: it runs
    ``litestream replicate`` and restarts it on a new configuration when a realm file appears."""

    agent_memory: Path
    store: ReplicaStore
    work: Path
    process: subprocess.Popen | None = None

    @property
    def log(self) -> Path:
        return self.work / "replicate.log"

    def start(self) -> AgentHost:
        with self.log.open("ab") as sink:
            self.process = subprocess.Popen(
                [PYTHON, str(REPO / "bin" / "litestream-agent-config"), str(self.agent_memory.parent), self.store.url,
                 "--run", "--litestream", str(litestream_binary()), "--every-s", "0.5"],
                stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.store.environ(os.environ),
            )
        for realm_file in self.agent_memory.glob(f"*{REALM_SUFFIX}"):
            self.wait_shipped(realm_file.name)
        return self

    def wait_shipped(self, file_name: str) -> None:
        # Litestream names the database by its link (docs/replicas.md §6), quoted when it holds '='.
        link = file_name.replace("%", "=")
        shipped = (f"db={link} ", f'db="{link}"')
        wait_for(lambda: any(mark in line for line in self.log.read_text().splitlines()
                             if '"snapshot complete"' in line for mark in shipped),
                 timeout_s=30, what=f"litestream replicate shipping {file_name}: {self.log}")

    def stop(self) -> None:
        end_process(self.process, timeout=40)
        self.process = None


@dataclass
class ConsoleHost:
    """``manage.py follow_replicas`` keeping ``state``'s copies of ``sources`` current."""

    state: Path
    store: ReplicaStore
    interval_ms: int = 200
    own_group: bool = False  # in a process group of its own, so a test can signal the whole group
    process: subprocess.Popen | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.state / "follow_replicas.log"

    @property
    def copies(self) -> Path:
        return self.state / "console" / "replicas"

    def start(self) -> ConsoleHost:
        self.state.mkdir(parents=True, exist_ok=True)
        env = self.store.environ(deployment_env(self.state, MOBKIT_REPLICA_SOURCES=f"{LABEL}={self.store.url}",
                                                DJANGO_SECRET_KEY="replica-tests"))
        with self.log.open("ab") as sink:
            self.process = subprocess.Popen(
                [PYTHON, "manage.py", "follow_replicas", "--follow-interval-ms", str(self.interval_ms),
                 "--list-interval-s", "1"],
                cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=self.own_group,
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

    def following(self, realm: str) -> bool:
        """Restored, and the copy the console reads (docs/replicas.md §3)."""
        status = self.status() or {}
        return (status.get("copies", {}).get(realm) or {}).get("state") == "following"

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
    store: ReplicaStore

    @property
    def source_url(self) -> str:
        return self.store.url

    def stop(self) -> None:
        self.console.stop()
        self.agent.stop()
        self.store.stop()
        for scribe in self.scribes.values():
            scribe.writer.close()


def hosts_start(base: Path, store_kind: str = "file", *, notes: int = 6) -> Hosts:
    """``REALMS`` written on an agent host (one quarantined note each), shipped to a replica store of
    ``store_kind``, and followed as ``LABEL``."""
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
    store = store_start(store_kind, base)
    hosts = Hosts(scribes, AgentHost(agent_memory, store, base / "agent"),
                  ConsoleHost(base / "console-state", store), store)
    try:
        hosts.agent.start()
        hosts.console.start()
        for realm in REALMS:
            wait_for(lambda: hosts.console.following(f"{LABEL}/{realm}"), timeout_s=30,
                     what=f"follow_replicas following {LABEL}/{realm}: {hosts.console.log}")
    except BaseException:
        hosts.stop()
        raise
    return hosts


def unrestorable_database(source: Path, realm_file_name: str) -> None:
    """A database in the ``file://`` source ``source`` that Litestream lists but can never restore:
    one level-0 LTX file (named as Litestream names them, so the listing finds TXID 1) of random bytes."""
    level = source / realm_file_name / "ltx" / "0"
    level.mkdir(parents=True)
    (level / "0000000000000001-0000000000000001.ltx").write_bytes(os.urandom(300))
