"""Many operators at once on one server process: a request that waits its turn never fails for
waiting (docs/serving.md §3), however many others are being answered meanwhile."""

from __future__ import annotations

import http.client
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.support.servers import daphne_servers, deployment_env, manage
from tests.support.worlds import write_spread

REALM = "wide"
CLIENTS = 12


def _holdings(port: int, token: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", f"/console/memory/?realm={REALM}", headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_concurrent_holdings_never_answer_503_for_time_spent_waiting(tmp_path: Path):
    # A wide realm makes Holdings render for a while; with a 150 ms limit, counting the time each
    # query spent waiting for the GIL while eleven other requests rendered failed most of them.
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    write_spread(state / "agent-memory", REALM, records=3_000, identities=600)
    env = deployment_env(state, MOBKIT_REALM_QUERY_TIMEOUT_MS="150")
    manage(env, "migrate", "--noinput")
    token = manage(env, "mobkit_token", "operator@example.test").strip().splitlines()[-1]

    with daphne_servers(env, 1) as (server,):
        assert _holdings(server.port, token) == 200
        with ThreadPoolExecutor(CLIENTS) as pool:
            statuses = list(pool.map(lambda _: _holdings(server.port, token), range(CLIENTS * 2)))

    assert statuses == [200] * (CLIENTS * 2)


def test_chunked_rpc_bodies_are_read_whole_and_an_oversized_one_is_refused(tmp_path: Path):
    # Pages run on Django's WSGI handler, which reads exactly Content-Length bytes: a body sent in
    # chunks, with no Content-Length, must still arrive whole, and one past the size limit must be
    # refused as too large rather than read without end (docs/serving.md §2).
    state = tmp_path / "state"
    (state / "console").mkdir(parents=True)
    write_spread(state / "agent-memory", REALM, records=5, identities=1)
    env = deployment_env(state)
    manage(env, "migrate", "--noinput")
    token = manage(env, "mobkit_token", "operator@example.test").strip().splitlines()[-1]
    call = b'{"jsonrpc":"2.0","id":7,"method":"mobkit/memory/panel/records","params":{"limit":2}}'
    padded = call[:-1] + b',"pad":"' + b"x" * (2 * 1024 * 1024) + b'"}'

    def post_chunked(port: int, body: bytes) -> tuple[int, dict]:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        pieces = (body[i : i + 65536] for i in range(0, len(body), 65536))
        connection.request("POST", "/console/rpc", body=pieces, encode_chunked=True,
                           headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        response = connection.getresponse()
        reply = json.loads(response.read())
        connection.close()
        return response.status, reply

    with daphne_servers(env, 1) as (server,):
        whole = post_chunked(server.port, call)
        oversized = post_chunked(server.port, padded)

    assert whole[0] == 200
    assert whole[1]["id"] == 7 and len(whole[1]["result"]["records"]) == 2
    assert oversized[0] == 413
    assert oversized[1]["error"]["message"] == "request body too large"
