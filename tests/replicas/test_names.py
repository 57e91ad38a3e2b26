"""Replica realm names beside local ones, and follow_replicas refusing what it cannot follow,
without Litestream running (docs/replicas.md §1-§3)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.core.management import CommandError, call_command

from memory_panel.conf import replica_copies_root
from memory_panel.replica_sources import redacted, redacted_in
from memory_panel.replica_stores import _with_scheme, database_url, source_listing
from memory_panel.replicas import Supervisor, litestream_binary
from memory_panel.store.realms import realm_names, realm_path
from tests.support.litestream import LABEL, ConsoleHost, store_start, wait_for
from tests.support.servers import PYTHON, REPO
from tests.support.worlds import write_notes


def test_a_local_realm_named_like_a_replica_realm_is_not_served_while_its_label_is_configured(
    agent_memory_dir: Path, settings
):
    write_notes(agent_memory_dir, "east/x", 1)
    write_notes(agent_memory_dir, "plain", 1)
    assert realm_names() == ["east/x", "plain"]
    settings.MOBKIT_REPLICA_SOURCES = {"east": "file:///nowhere"}
    assert realm_names() == ["plain"]
    assert realm_path("east/x") == settings.MOBKIT_PERSISTENT_STATE / "console" / "replicas" / "east" / "x.sqlite3"


def test_follow_replicas_without_sources_says_what_to_set(settings):
    settings.MOBKIT_REPLICA_SOURCES = {}
    with pytest.raises(CommandError, match="MOBKIT_REPLICA_SOURCES is empty"):
        call_command("follow_replicas")


def _listed_once(supervisor: Supervisor) -> dict:
    for watch in supervisor.watches:
        watch.list_once()
    supervisor.step()
    return json.loads((supervisor.copies_root / "followers.json").read_text())


def test_a_source_it_cannot_list_is_reported_and_the_others_followed(tmp_path: Path):
    supervisor = Supervisor(
        sources={"cloud": "gs://bucket/mobkit", "gone": f"file://{tmp_path / 'missing'}"},
        copies_root=tmp_path / "copies", binary=litestream_binary(), interval_ms=1000,
    )
    status = _listed_once(supervisor)
    assert status["sources"]["cloud"]["error"] == (
        "gs:// sources cannot be listed for realms: use file://, s3:// or sftp:// (docs/replicas.md §2)")
    assert status["sources"]["gone"]["error"] == f"file://{tmp_path / 'missing'}: no such directory"
    assert status["copies"] == {}


@pytest.mark.parametrize(("source", "database", "url"), [
    # A file:// path is read byte for byte: the encoded name stays as it is.
    ("file:///srv/replicas", "team%3Ablue.sqlite3", "file:///srv/replicas/team%3Ablue.sqlite3"),
    # Other URLs' paths are decoded: '%' is written %25, and the name goes before the query.
    ("s3://bucket/agents", "team%3Ablue.sqlite3", "s3://bucket/agents/team%253Ablue.sqlite3"),
    ("s3://bucket/agents/?endpoint=127.0.0.1:9000&region=eu-west-1", "default.sqlite3",
     "s3://bucket/agents/default.sqlite3?endpoint=127.0.0.1:9000&region=eu-west-1"),
    ("s3://bucket", "default.sqlite3", "s3://bucket/default.sqlite3"),
    ("sftp://mob:p%40ss@host:2222/srv/east", "a%2Fb.sqlite3", "sftp://mob:p%40ss@host:2222/srv/east/a%252Fb.sqlite3"),
])
def test_each_database_of_a_source_is_followed_by_the_url_litestream_reads_as_its_replica(source, database, url):
    assert database_url(source, database) == url


@pytest.mark.parametrize(("url", "shown"), [
    ("sftp://mob:p%40ss@host:2222/srv", "sftp://mob:***@host:2222/srv"),
    ("sftp://mob@host/srv", "sftp://mob@host/srv"),
    ("s3://bucket/agents?region=eu-west-1", "s3://bucket/agents?region=eu-west-1"),
])
def test_a_password_in_a_source_url_is_never_shown(url, shown):
    assert redacted(url) == shown


def test_litestreams_words_about_a_source_lose_its_password_as_written_and_as_decoded():
    url = "sftp://mob:p%40ss@host/srv"
    assert redacted_in("dial mob:p%40ss@host: refused; auth p@ss failed", url) == "dial mob:***@host: refused; auth *** failed"


def test_an_sftp_source_refusing_the_password_is_reported_without_it(tmp_path: Path):
    store = store_start("sftp", tmp_path)
    wrong = store.url.replace("p%40ss%3Aword", "not-the-password")
    console = ConsoleHost(tmp_path / "console-state", replace(store, url=wrong))
    try:
        console.start()
        error = wait_for(lambda: ((console.status() or {}).get("sources", {}).get(LABEL) or {}).get("error"),
                         timeout_s=30, what="follow_replicas reporting the source")
    finally:
        console.stop()
        store.stop()
    assert error.startswith(f"sftp://mob:***@127.0.0.1:{urlsplit(store.url).port}/agents/east: ")
    assert "Authentication failed" in error
    for said in (console.log.read_text(), (console.copies / "followers.json").read_text()):
        assert "not-the-password" not in said


def test_a_source_that_is_not_followed_is_flagged_on_health_and_holdings(agent_memory_dir: Path, settings, console):
    east = agent_memory_dir.parent / "east-replica"
    east.mkdir()
    settings.MOBKIT_REPLICA_SOURCES = {"cloud": "gs://bucket/agents", "east": f"file://{east}"}
    answer = console.get("/console/replicas/health")
    assert answer.status_code == 503
    never = "follow_replicas has never run on this console host"
    assert answer.json()["source_problems"] == [{"label": "cloud", "problem": never}, {"label": "east", "problem": never}]

    _listed_once(Supervisor(sources=settings.MOBKIT_REPLICA_SOURCES, copies_root=replica_copies_root(),
                            binary=litestream_binary(), interval_ms=1000))
    answer = console.get("/console/replicas/health")
    assert answer.status_code == 503 and answer.json()["ok"] is False
    assert answer.json()["source_problems"] == [{"label": "cloud", "problem": (
        "cannot be listed: gs:// sources cannot be listed for realms: use file://, s3:// or sftp:// "
        "(docs/replicas.md §2)")}]
    holdings = console.get("/console/memory/").content.decode()
    assert "Realms of other hosts may be missing or out of date." in holdings
    assert "<code>cloud</code>: cannot be listed: gs:// sources" in holdings and "<code>east</code>" not in holdings

    settings.MOBKIT_REPLICA_SOURCES = {"east": f"file://{east}"}
    answer = console.get("/console/replicas/health")
    assert (answer.status_code, answer.json()) == (200, {"ok": True, "stale": [], "replicas": [], "source_problems": []})
    assert "Realms of other hosts" not in console.get("/console/memory/").content.decode()


@pytest.mark.parametrize(("endpoint", "reached_at"), [
    ("127.0.0.1:9000", "http://127.0.0.1:9000"),
    ("localhost:9000", "http://localhost:9000"),
    ("10.1.2.3:9000", "http://10.1.2.3:9000"),
    ("172.20.0.5", "http://172.20.0.5"),
    ("minio.local:9000", "http://minio.local:9000"),
    ("s3.eu-central-1.wasabisys.com", "https://s3.eu-central-1.wasabisys.com"),
    ("minio:9000", "https://minio:9000"),  # a bare name is not known to be local: TLS, as Litestream does
    ("http://minio:9000", "http://minio:9000"),
])
def test_an_s3_endpoint_without_a_scheme_is_reached_the_way_litestream_reaches_it(endpoint, reached_at):
    assert _with_scheme(endpoint) == reached_at


def test_the_agent_host_script_says_when_it_cannot_run_litestream(tmp_path: Path):
    (tmp_path / "agent-memory").mkdir()
    write_notes(tmp_path / "agent-memory", "default", 1)
    ran = subprocess.run([PYTHON, str(REPO / "bin" / "litestream-agent-config"), str(tmp_path),
                          f"file://{tmp_path / 'replica'}", "--run", "--litestream", str(tmp_path / "no-litestream")],
                         capture_output=True, text=True, timeout=30)
    assert ran.returncode == 2
    assert f"cannot run '{tmp_path / 'no-litestream'}': No such file or directory" in ran.stderr
    # Written before: readable by its user alone, since an SFTP replica URL carries a password.
    assert (tmp_path / "litestream-links" / "litestream.yml").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("url", [
    "sftp://mob@127.0.0.1:notaport/srv",
    "s3://bucket/agents?region=bad%20region",
    "s3://bucket/agents?endpoint=http://[::1",
])
def test_a_source_url_that_cannot_be_listed_is_reported_not_a_silently_dead_listing(tmp_path: Path, url):
    status = _listed_once(Supervisor(sources={"odd": url}, copies_root=tmp_path / "copies",
                                     binary=litestream_binary(), interval_ms=1000))
    assert status["sources"]["odd"]["error"], status["sources"]
    assert status["sources"]["odd"]["listed_at_ms"] is None


def test_a_source_is_flagged_until_its_first_listing(agent_memory_dir: Path, settings, console):
    east = agent_memory_dir.parent / "east-replica"
    east.mkdir()
    settings.MOBKIT_REPLICA_SOURCES = {"east": f"file://{east}"}
    supervisor = Supervisor(sources=settings.MOBKIT_REPLICA_SOURCES, copies_root=replica_copies_root(),
                            binary=litestream_binary(), interval_ms=1000)
    supervisor.step()  # running, but its listing thread has not answered yet
    answer = console.get("/console/replicas/health")
    assert answer.status_code == 503
    assert answer.json()["source_problems"] == [
        {"label": "east", "problem": "not listed yet: its realms appear once follow_replicas has listed it"}]
    _listed_once(supervisor)
    assert console.get("/console/replicas/health").status_code == 200


def test_only_litestream_shaped_keys_name_a_database_in_an_s3_source(tmp_path: Path, monkeypatch):
    store = store_start("s3", tmp_path)
    try:
        for name, value in store.env.items():
            monkeypatch.setenv(name.replace("AWS_", "LITESTREAM_"), value)
        bucket = store.s3_client()
        for key in ("agents/east/default.sqlite3/0000/0000000000000001-0000000000000003.ltx",
                    "agents/east/default.sqlite3/0009/0000000000000001-0000000000000002.ltx",
                    "agents/east/team%3Ablue.sqlite3/0001/0000000000000001-000000000000000a.ltx",
                    "agents/east/backup.sqlite3",  # a stray object, not a Litestream database
                    "agents/east2/other.sqlite3/0000/0000000000000001-0000000000000001.ltx"):  # another prefix
            bucket.put_object(Bucket="mobkit", Key=key, Body=b"")
        assert source_listing(store.url) == {"default.sqlite3": 3, "team%3Ablue.sqlite3": 10}
    finally:
        store.stop()
