"""Ledger fixtures: a persistent_state directory and a raw TCP server for health checks."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ledger.support import access_posture, console, rpc  # noqa: F401  (fixtures)


@pytest.fixture
def state_dir(tmp_path: Path, settings) -> Path:
    root = tmp_path / "state"
    root.mkdir()
    settings.MOBKIT_PERSISTENT_STATE = root
    return root


class RawServer:
    """A one-connection-at-a-time TCP server answering every request with fixed bytes."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.requests: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.requests.append(conn.recv(4096))
                conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def serve() -> Iterator:
    servers: list[RawServer] = []

    def start(reply: bytes) -> RawServer:
        servers.append(RawServer(reply))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
