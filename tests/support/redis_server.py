"""A Redis server of the test's own, on a free loopback port, that the test may stop and start again;
and the Redis other runs share (MOBKIT_TEST_REDIS_URL), for tests that only use it.

Tests that take Redis away (an outage) must never stop the shared one: theirs is ``redis-server`` on
a port of its own, keeping nothing on disk.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from tests.support.servers import end_process, free_port

SHARED_REDIS_URL = os.environ.get("MOBKIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def shared_redis_missing() -> str | None:
    """Why the shared Redis cannot be reached, or None when it answers."""
    try:
        redis.Redis.from_url(SHARED_REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError as error:
        return f"Redis at MOBKIT_TEST_REDIS_URL={SHARED_REDIS_URL} is unreachable ({error})"
    return None




def redis_server_missing() -> str | None:
    """Why an own Redis cannot be started here, or None when ``redis-server`` is on PATH."""
    if shutil.which("redis-server") is None:
        return "redis-server is not on PATH: the outage tests start and stop a Redis of their own"
    return None


class OwnRedis:
    """``redis-server`` on 127.0.0.1:``port`` (the same port across a stop and a start)."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        with (self.directory / f"redis-{self.port}.log").open("ab") as sink:
            self.process = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", str(self.directory)],
                stdout=sink, stderr=sink,
            )
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis(port=self.port, socket_connect_timeout=0.5).ping()
                return
            except redis.RedisError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"redis-server on port {self.port} did not come up") from None
                time.sleep(0.05)

    def stop(self) -> None:
        end_process(self.process, timeout=10)
        self.process = None


@contextmanager
def own_redis(directory: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()
