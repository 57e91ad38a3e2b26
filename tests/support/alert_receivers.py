"""Real receivers on loopback for the alert tests: a signed-webhook endpoint that checks the
HMAC and counts what it got (optionally failing its first N requests), and an SMTP server."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller

from tests.support.servers import free_port


@dataclass
class SignedReceiver:
    """``url`` takes POSTs; a request whose signature does not verify is answered 401 and not kept."""

    secret: str
    fail_first: int = 0
    received: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    bad_signatures: int = 0

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.requests += 1
                timestamp = self.headers.get("X-Mobkit-Alert-Timestamp", "")
                expected = "sha256=" + hmac.new(receiver.secret.encode(), timestamp.encode() + b"." + body,
                                                hashlib.sha256).hexdigest()
                if not hmac.compare_digest(expected, self.headers.get("X-Mobkit-Alert-Signature", "")):
                    receiver.bad_signatures += 1
                    status = 401
                elif receiver.requests <= receiver.fail_first:
                    status = 500
                else:
                    receiver.received.append(json.loads(body))
                    status = 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"mobkit+http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], bytes]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 OK"


class SmtpReceiver:
    """aiosmtpd on loopback; ``mailto_url`` is the Apprise URL that sends to it."""

    def __init__(self) -> None:
        self.inbox = _Inbox()
        self.port = free_port()
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    @property
    def messages(self) -> list[tuple[str, list[str], bytes]]:
        return self.inbox.messages

    def mailto_url(self, to: str) -> str:
        return f"mailto://127.0.0.1:{self.port}?from=alerts@example.test&to={to}&smtp=127.0.0.1&mode=insecure"

    def close(self) -> None:
        self.controller.stop()
