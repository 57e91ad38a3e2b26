"""Replica fixtures: one agent host shipping real realm files with ``litestream replicate`` and one
console host running ``follow_replicas`` on them (tests/support/litestream.py), shared by a module
since each start costs seconds.

- ``hosts`` → the running ``Hosts``, once per kind of replica store: a directory, S3, SFTP.
- ``replica_console`` → the same, with the console in this process pointed at the console host's
  state, source ``east`` configured and a local realm ``local`` beside the copies.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.litestream import LABEL, STORES, Hosts, hosts_start
from tests.support.worlds import write_notes


@pytest.fixture(scope="module", params=STORES)
def hosts(request, tmp_path_factory) -> Iterator[Hosts]:
    started = hosts_start(tmp_path_factory.mktemp(f"replicas-{request.param}"), request.param)
    yield started
    started.stop()


@pytest.fixture
def replica_console(hosts: Hosts, settings, tmp_path: Path) -> Hosts:
    settings.MOBKIT_PERSISTENT_STATE = hosts.console.state
    settings.MOBKIT_AGENT_MEMORY_ROOT = tmp_path / "agent-memory"
    settings.MOBKIT_REPLICA_SOURCES = {LABEL: hosts.source_url}
    settings.MOBKIT_ACCESS_CONFIG = None
    write_notes(tmp_path / "agent-memory", "local", 2)
    return hosts
