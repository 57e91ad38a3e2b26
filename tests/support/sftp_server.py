"""A real SFTP server on loopback for the replica tests: asyncssh serving one directory as its root,
password sign-in for one user. Run as a process: ``python sftp_server.py ROOT PORT USER PASSWORD HOST_KEY``;
it writes its host key's public half to ``HOST_KEY.pub`` before it accepts connections, then
prints ``listening``.
"""

from __future__ import annotations

import asyncio
import sys

import asyncssh


async def serve(root: str, port: int, user: str, password: str, host_key: str) -> None:
    key = asyncssh.generate_private_key("ssh-ed25519")
    key.write_private_key(host_key)
    key.write_public_key(f"{host_key}.pub")

    class Server(asyncssh.SSHServer):
        def begin_auth(self, username: str) -> bool:
            return True

        def password_auth_supported(self) -> bool:
            return True

        def validate_password(self, username: str, given: str) -> bool:
            return username == user and given == password

    await asyncssh.listen("127.0.0.1", port, server_host_keys=[host_key], server_factory=Server,
                          sftp_factory=lambda channel: asyncssh.SFTPServer(channel, chroot=root))
    print("listening", flush=True)
    await asyncio.Future()


if __name__ == "__main__":
    root, port, user, password, host_key = sys.argv[1:6]
    asyncio.run(serve(root, int(port), user, password, host_key))
