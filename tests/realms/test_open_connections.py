"""However many realms a page reads, a process keeps at most ``MOBKIT_REALM_CONNECTIONS``
connections to realm and index files open, and every realm is still listed (docs/serving.md §5)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from access.caller import Access
from memory_panel.search_text import parse_query
from memory_panel.store.all_realms_index import index_path
from memory_panel.selectors.records import record_list
from memory_panel.selectors.search import record_search
from memory_panel.simulator.store_writer import StoreWriter, identity_scope
from memory_panel.wire.params import RecordFilter

pytestmark = pytest.mark.django_db

OPEN = Access(subject="ops", groups=frozenset(), enforced=False, is_admin=False)
REALMS = [f"realm-{n:02d}" for n in range(10)]


def _files_open_under(directory: Path) -> set[str]:
    """The realm and per-realm index files under ``directory`` this process has open (a WAL file's
    -wal and -shm count with it). The console-wide index is one file per thread, not per realm."""
    prefix = str(directory.resolve())
    shared = str(index_path().resolve())
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed since it was listed
        if target.startswith(prefix) and not target.startswith(shared):
            found.add(target.removesuffix("-wal").removesuffix("-shm"))
    return found


def _write_realm(root: Path, name: str, title: str) -> None:
    with StoreWriter.create(name, root=root, overwrite=True) as writer:
        writer.remember(identity_scope(name, "identity:luka"), title, "kept in the harbour office")


@pytest.fixture
def ten_realms(agent_memory_dir: Path, settings) -> Path:
    settings.MOBKIT_REALM_CONNECTIONS = 4
    for name in REALMS:
        _write_realm(agent_memory_dir, name, f"Ferry timetable of {name}")
    return agent_memory_dir


def _rpc(client: Client, method: str, **params: object) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": f"mobkit/memory/panel/{method}", "params": params}
    return client.post("/console/rpc", json.dumps(body), content_type="application/json").json()["result"]


@pytest.fixture
def client() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("ops", "ops@example.test", "pw"))
    return client


def test_a_records_page_over_more_realms_than_the_bound_lists_them_all_within_the_bound(ten_realms):
    page = record_list(access=OPEN, realm=None, filters=RecordFilter(), limit=50, cursor=None)

    assert sorted(record.realm for record in page.records) == REALMS
    assert page.realms == REALMS
    assert len(_files_open_under(ten_realms)) <= 4


def test_a_search_over_more_realms_than_the_bound_finds_every_realms_match_within_the_bound(ten_realms, settings):
    # The search index of every realm and every realm file together: at most the bound open.
    page = record_search(
        access=OPEN, realm=None, query=parse_query("ferry"), filters=RecordFilter(), limit=50, cursor=None
    )

    assert sorted(result.record.realm for result in page.results) == REALMS
    assert len(_files_open_under(Path(settings.MOBKIT_PERSISTENT_STATE))) <= 4


def test_a_bound_of_one_still_serves_every_realm(ten_realms, settings):
    settings.MOBKIT_REALM_CONNECTIONS = 1
    search = record_search(
        access=OPEN, realm=None, query=parse_query("ferry"), filters=RecordFilter(), limit=50, cursor=None
    )
    records = record_list(access=OPEN, realm=None, filters=RecordFilter(), limit=50, cursor=None)

    assert sorted(result.record.realm for result in search.results) == REALMS
    assert sorted(record.realm for record in records.records) == REALMS
    assert len(_files_open_under(Path(settings.MOBKIT_PERSISTENT_STATE))) <= 1


def test_no_realm_file_stays_open_once_a_request_has_ended(ten_realms, client):
    # A replica copy's follower applies nothing while a reader holds the copy (docs/replicas.md §4).
    assert len(_rpc(client, "records", limit=50)["records"]) == 10

    assert _files_open_under(ten_realms) == set()


def test_a_realm_replaced_between_two_requests_is_seen_by_the_next(ten_realms, client, tmp_path):
    before = _rpc(client, "records", limit=50)["records"]
    assert "Ferry timetable of realm-03" in {record["title"] for record in before}

    # Restored from elsewhere: another file renamed over the realm's.
    elsewhere = tmp_path / "restore"
    elsewhere.mkdir()
    _write_realm(elsewhere, "realm-03", "Restored harbour map")
    os.replace(elsewhere / "realm-03.sqlite3", ten_realms / "realm-03.sqlite3")
    for leftover in ("-wal", "-shm"):
        (ten_realms / f"realm-03.sqlite3{leftover}").unlink(missing_ok=True)

    titles = {record["title"] for record in _rpc(client, "records", limit=50)["records"]}
    assert "Restored harbour map" in titles
    assert "Ferry timetable of realm-03" not in titles
    assert len(titles) == 10
