"""A large realm whose index is being built answers at once: rows its own scope index finds, else
how far along the build is (docs/realm-index.md §5, §7; docs/wire-contract.md §1.5).

The build is held open the way another process building the realm holds it: ``build.lock`` taken
and ``progress.json`` written through the builder's own ``ProgressReport``. The realm's existing
generation was written by another console version, so only the held-open build can replace it.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator

import pytest

from memory_panel.simulator.store_writer import identity_scope, mob_scope
from memory_panel.store.console_index.progress import PROGRESS_FILE, BuildProgress, ProgressReport, read_progress
from memory_panel.store.realm_index import REALM_INDEX
from memory_panel.store.search_index import SEARCH_INDEX
from tests.support.rpc import panel

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("too_large_to_read_directly")]

REALM_INDEXING = -32020


def _outdated(generation) -> None:
    """Make a generation one written by another console version: only a rebuild can replace it."""
    with sqlite3.connect(generation) as conn:
        conn.execute("UPDATE meta SET value = 'older' WHERE key = 'schema_version'")


class HeldBuild:
    """A build of one index family under way elsewhere: its lock held, its progress recorded."""

    def __init__(self, family, realm: str) -> None:
        self.directory = family.directory(realm)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.lock = open(self.directory / "build.lock", "w")
        fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.report = ProgressReport(self.directory, realm, family.name, family.phases)

    def release(self) -> None:
        self.report.finish()
        self.lock.close()


@pytest.fixture
def being_indexed(realm_writer) -> Iterator[HeldBuild]:
    """Realm 'big' (10 rows, indexed by an older console) with its new index 4 of 10 rows into the copy,
    and realm 'small' (2 rows), read directly."""
    writer = realm_writer("big")
    for n in range(6):
        writer.remember(identity_scope("big", "identity:luka"), f"Luka fact {n}", f"Body {n}")
    for n in range(4):
        writer.remember(mob_scope("big", "ops"), f"Runbook {n}", f"Step {n}")
    small = realm_writer("small")
    for n in range(2):
        small.remember(identity_scope("small", "identity:ana"), f"Ana fact {n}", f"Body {n}")
    _outdated(REALM_INDEX.build("big"))
    _outdated(SEARCH_INDEX.build("big"))
    build = HeldBuild(REALM_INDEX, "big")
    search_build = HeldBuild(SEARCH_INDEX, "big")  # waits for the realm index, recording nothing yet
    build.report.enter("numbering texts")
    build.report.enter("copying records")
    build.report.rows(4, 10)
    yield build
    build.release()
    search_build.release()


def test_records_of_a_realm_being_indexed_answer_the_indexing_error_with_its_progress_at_once(console, being_indexed):
    started = time.monotonic()
    error = panel(console, "records", {"realm": "big"}).error

    assert time.monotonic() - started < 2
    assert error["code"] == REALM_INDEXING
    assert "realm 'big' is being indexed (copying records, 22% done" in error["message"]
    data = error["data"]
    assert {key: data[key] for key in ("realm", "index", "phase", "rows_done", "rows_total", "percent")} == {
        "realm": "big", "index": "realm-index", "phase": "copying records", "rows_done": 4, "rows_total": 10,
        "percent": 22,  # numbering (10%) done, and 4 of 10 rows of the copy (30%)
    }
    assert isinstance(data["eta_seconds"], int) and data["eta_seconds"] >= 1
    assert isinstance(data["elapsed_seconds"], int)


def test_one_scope_of_a_realm_being_indexed_is_read_from_the_realm_itself(console, being_indexed):
    ops = panel(console, "records", {"realm": "big", "scope": "mob", "scope_key": "ops"}).result

    assert sorted(r["title"] for r in ops["records"]) == [f"Runbook {n}" for n in range(4)]


def test_one_scope_too_large_to_read_directly_answers_the_indexing_error(console, being_indexed):
    # Six rows in the scope: as many as a direct read may take (five), counted on the store's scope index.
    started = time.monotonic()
    error = panel(console, "records", {"realm": "big", "identity": "identity:luka"}).error

    assert time.monotonic() - started < 2
    assert error["code"] == REALM_INDEXING
    assert error["data"]["phase"] == "copying records"


def test_every_realm_records_leave_out_the_realm_being_indexed_and_list_the_rest(console, being_indexed):
    result = panel(console, "records", {}).result

    assert result["realms"] == ["small"]
    assert sorted(r["title"] for r in result["records"]) == ["Ana fact 0", "Ana fact 1"]


def test_search_of_a_realm_whose_first_index_is_built_says_it_waits_for_that_build(console, being_indexed):
    error = panel(console, "search", {"realm": "big", "query": "fact"}).error

    assert error["code"] == REALM_INDEXING
    assert error["data"]["index"] == "search-index"
    assert error["data"]["phase"] == "waiting for the realm-index build"
    assert error["data"]["eta_seconds"] is None


def test_the_records_page_of_a_realm_being_indexed_says_how_far_along_and_refreshes_itself(console, being_indexed):
    response = console.get("/console/memory/records/", {"realm": "big"})

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    page = response.content.decode()
    assert "Realm <code>big</code> is being indexed" in page
    assert '<progress max="100" value="22">' in page
    assert "copying records (4 of 10 rows copied)" in page
    assert '<meta http-equiv="refresh" content="5">' in page


def test_holdings_of_every_realm_name_the_realm_being_indexed_with_its_progress(console, being_indexed):
    page = console.get("/console/memory/").content.decode()

    assert "<code>big</code>: being indexed (copying records, 22% done" in page
    assert "identity:ana" in page


def test_the_realm_list_shows_the_build_under_way(console, being_indexed):
    page = console.get("/console/").content.decode()

    assert "index being built: copying records, 22% done" in page


def test_pages_answer_from_the_new_index_once_the_build_is_done(console, being_indexed):
    being_indexed.release()
    REALM_INDEX.build("big")

    result = panel(console, "records", {"realm": "big"}).result
    assert len(result["records"]) == 10
    assert not (being_indexed.directory / PROGRESS_FILE).exists()


def test_a_realm_below_the_direct_read_limit_is_read_directly_while_indexed(console, being_indexed, settings):
    settings.MOBKIT_REALM_DIRECT_MAX_ROWS = 11

    assert len(panel(console, "records", {"realm": "big"}).result["records"]) == 10


def test_the_progress_of_a_builder_that_died_is_ignored(being_indexed):
    assert read_progress(being_indexed.directory) is not None
    record = (being_indexed.directory / PROGRESS_FILE).read_text()
    gone = os.fork()
    if gone == 0:
        os._exit(0)
    os.waitpid(gone, 0)
    (being_indexed.directory / PROGRESS_FILE).write_text(record.replace(f'"pid": {os.getpid()}', f'"pid": {gone}'))

    assert read_progress(being_indexed.directory) is None


def test_the_time_left_follows_the_pace_so_far():
    progress = BuildProgress("big", "realm-index", "sorting indexes", 10, 10, 0.75, started_at=1000.0, updated_at=1030.0)

    assert progress.eta_seconds(now=1030.0) == 10  # 30 s for three quarters: 10 s for the last
    assert progress.eta_seconds(now=1035.0) == 5
    assert BuildProgress("big", "realm-index", "numbering texts", 0, 10, 0.01, 1000.0, 1001.0).eta_seconds() is None


def test_a_real_build_leaves_no_progress_behind(realm_writer):
    writer = realm_writer("done")
    for n in range(3):
        writer.remember(identity_scope("done", "identity:luka"), f"Fact {n}", "Body")

    REALM_INDEX.build("done")

    assert not (REALM_INDEX.directory("done") / PROGRESS_FILE).exists()
    assert REALM_INDEX.progress("done") is None
