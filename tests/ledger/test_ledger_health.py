"""MobKit's ledger health check (docs/runtime-surfaces.md §1.7) against real local sockets."""

from __future__ import annotations

import socket

import pytest

from memory_panel.selectors.ledger import ledger_health


def test_2xx_is_healthy_and_the_request_is_mobkits_raw_get(serve):
    server = serve(b"HTTP/1.1 204 No Content\r\n\r\n")
    health = ledger_health(endpoint=f"http://127.0.0.1:{server.port}/base/")
    assert health.healthy and health.message == "HTTP 204"
    assert health.url == f"http://127.0.0.1:{server.port}/base/v1/health"
    # the Host header carries no port (docs/runtime-surfaces.md §1.7 step 3)
    assert server.requests == [b"GET /base/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"]


@pytest.mark.parametrize(
    ("reply", "failure"),
    [
        (b"HTTP/1.1 503 Service Unavailable\r\n\r\n", "healthcheck status failed for '{url}': HTTP 503"),
        (b"HTTP/1.1 302 Found\r\n\r\n", "healthcheck status failed for '{url}': HTTP 302"),
        (b"garbage\r\n", "healthcheck parse failed for '{url}': invalid status line 'garbage'"),
        (b"", "healthcheck read failed for '{url}': empty response"),
    ],
)
def test_unhealthy_replies_use_mobkits_messages(serve, reply, failure):
    server = serve(reply)
    url = f"http://127.0.0.1:{server.port}/v1/health"
    health = ledger_health(endpoint=f"http://127.0.0.1:{server.port}")
    assert not health.healthy
    assert health.message == failure.format(url=url)


def test_refused_connection_is_a_connect_failure():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    health = ledger_health(endpoint=f"http://127.0.0.1:{port}")
    assert not health.healthy
    assert health.message.startswith(f"healthcheck connect failed for 'http://127.0.0.1:{port}/v1/health': ")


@pytest.mark.parametrize(
    ("endpoint", "message"),
    [
        ("https://h:1", "memory backend endpoint must start with http:// (got 'https://h:1/v1/health')"),
        ("http://:80", "memory backend endpoint host must not be empty"),
        ("http://h:notaport", "memory backend endpoint port is invalid in 'http://h:notaport/v1/health'"),
        ("   ", "memory backend health_check_endpoint must not be empty when provided"),
    ],
)
def test_invalid_endpoints_are_reported_not_raised(endpoint, message):
    health = ledger_health(endpoint=endpoint)
    assert not health.healthy and health.message == message
