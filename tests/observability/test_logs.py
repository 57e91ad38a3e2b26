"""Structured logs: with ``LOG_FORMAT=json`` every line ``bin/serve`` writes is one JSON object, and a
request's lines carry its ``X-Request-ID``, which its response returns (docs/serving.md §8)."""

from __future__ import annotations

import http.client
import io
import json
from pathlib import Path

import pytest

from mobkit_console.observability.logs import log_format
from mobkit_console.observability.middleware import request_id_for
from tests.support.servers import Serve, console_with_token, free_port, start_serve, stop_serve
from tests.support.worlds import write_spread


def _get(server: Serve, path: str, headers: dict[str, str]) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_json_logs_are_one_object_a_line_and_carry_the_request_id_subject_and_realm(tmp_path: Path):
    state = tmp_path / "state"
    write_spread(state / "agent-memory", "default", records=20, identities=2)
    env, token = console_with_token(state, "logger@example.test", LOG_FORMAT="json", METRICS_PORT=str(free_port()))
    server = start_serve(env, 1)
    try:
        signed_in = {"Authorization": f"Bearer {token}"}
        missing = _get(server, "/console/memory/records/no-such-record/?realm=default",
                       {**signed_in, "X-Request-ID": "obs-req-0001"})
        assert missing.status == 404
        assert missing.getheader("X-Request-ID") == "obs-req-0001"
        insane = _get(server, "/console/nowhere", {"X-Request-ID": "two words\t" + "x" * 300})
        made = insane.getheader("X-Request-ID")
        assert len(made) == 32 and int(made, 16) >= 0  # one made here, not the one sent
        assert _get(server, "/console/memory/records/", signed_in).getheader("X-Request-ID")
        push = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)  # ingest: not Django's
        push.request("POST", "/console/events", body=json.dumps({"identity": "_system", "event_type": "memory.dream.started",
                                                                   "timestamp_ms": 1, "data": {"realm": "default"}}),
                     headers={"Authorization": f"Bearer {env['MOBKIT_INGEST_TOKEN']}", "X-Request-ID": "obs-push-0002"})
        pushed = push.getresponse()
        assert pushed.status == 201 and pushed.getheader("X-Request-ID") == "obs-push-0002"
        push.close()
    finally:
        stop_serve(server)

    lines = [line for line in server.log.read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # raises on any line that is not JSON
    assert all({"event", "level", "timestamp"} <= record.keys() for record in records)
    loggers = {record.get("logger") for record in records}
    assert {"uvicorn.error", "django.request"} <= loggers
    mine = [record for record in records if record.get("request_id") == "obs-req-0001"]
    assert mine, lines
    assert all(record["subject"] == "logger@example.test" and record["realm"] == "default" for record in mine)
    assert any(record.get("request_id") == made for record in records)


@pytest.mark.parametrize(("sent", "kept"), [
    ("obs-req-0001", True),
    ("3f2a9c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b", True),
    ("trace:abc/def@host+1=2.3_4", True),
    ("a" * 128, True),
    ("a" * 129, False),
    ("", False),
    ("-starts-with-a-dash", False),
    ("two words", False),
    ("line\nbreak", False),
    ('quote"d', False),
    ("ünïcode", False),
    (None, False),
])
def test_a_sent_request_id_is_kept_only_when_short_and_plain(sent: str | None, kept: bool):
    chosen = request_id_for(sent)
    assert (chosen == sent) is kept
    if not kept:
        assert len(chosen) == 32 and int(chosen, 16) >= 0


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("value", "tty", "chosen"), [
    (None, True, "console"), (None, False, "json"), ("", False, "json"), (" JSON ", True, "json"),
    ("console", False, "console"),
])
def test_log_format_defaults_to_console_on_a_terminal_and_json_elsewhere(value, tty, chosen):
    assert log_format(value, stream=_Stream(tty)) == chosen


def test_an_unknown_log_format_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="LOG_FORMAT must be one of json, console, not 'xml'"):
        log_format("xml", stream=_Stream(False))
