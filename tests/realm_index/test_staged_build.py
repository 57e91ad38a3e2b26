"""A realm too large to read directly is indexed in two stages: its records order first, published
as a generation the records pages answer from, then the rest (docs/realm-index.md §5, §7).

The second stage is held open the way another process completing the realm holds it:
``build.lock`` taken and ``progress.json`` written through the builder's own ``ProgressReport``,
over a first-stage generation the real first stage wrote.
"""

from __future__ import annotations

import fcntl
import sqlite3
from collections.abc import Iterator

import pytest

from memory_panel.simulator.store_writer import identity_scope, mob_scope
from memory_panel.store.console_index.generations import write_generation
from memory_panel.store.console_index.progress import ProgressReport
from memory_panel.store.realm_index import ORDERING, REALM_INDEX
from memory_panel.store.search_index import SEARCH_INDEX
from tests.support.rpc import panel

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("too_large_to_read_directly")]

REALM_INDEXING = -32020


def _first_stage(realm: str):
    stage = REALM_INDEX.first_stage
    return write_generation(
        REALM_INDEX.directory(realm), realm, stage.fill, name=REALM_INDEX.name, phases=stage.phases,
        schema_version=REALM_INDEX.schema_version,
    )


class HeldCompletion:
    """The second stage under way elsewhere: the lock held, its progress recorded."""

    writer: object = None  # the realm's store writer, for writes while it is held

    def __init__(self, realm: str) -> None:
        directory = REALM_INDEX.directory(realm)
        self.lock = open(directory / "build.lock", "w")
        fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.report = ProgressReport(directory, realm, REALM_INDEX.name, REALM_INDEX.first_stage.complete_phases)
        self.report.enter("copying the records order")
        self.report.enter("counting holdings and tile facts")

    def release(self) -> None:
        self.report.finish()
        self.lock.close()


@pytest.fixture
def ordering_only(realm_writer) -> Iterator[HeldCompletion]:
    """Realm 'big' (12 rows, two scopes) with its search index, its realm index's first stage
    published and the second held open."""
    writer = realm_writer("big")
    for n in range(6):
        writer.remember(identity_scope("big", "identity:luka"), f"Luka fact {n}", f"Body {n}")
        writer.remember(mob_scope("big", "ops"), f"Runbook {n}", f"Step {n}")
    SEARCH_INDEX.build("big")  # search answers; the realm index is the one being built
    generation = _first_stage("big")
    assert REALM_INDEX.stage_of(generation) == ORDERING
    held = HeldCompletion("big")
    held.writer = writer
    yield held
    held.release()


def _walk(console, params: dict) -> list[str]:
    titles: list[str] = []
    cursor = None
    while True:
        result = panel(console, "records", {**params, "limit": 5, **({"cursor": cursor} if cursor else {})}).result
        titles += [r["title"] for r in result["records"]]
        cursor = result.get("next_cursor")
        if not cursor:
            return titles


def test_the_records_pages_answer_from_the_first_stage_every_row_once_newest_first(console, ordering_only):
    titles = _walk(console, {"realm": "big"})

    # Written in turn, so newest first is the reverse of the writing order.
    written = [t for n in range(6) for t in (f"Luka fact {n}", f"Runbook {n}")]
    assert titles == written[::-1]
    page = console.get("/console/memory/records/", {"realm": "big"})
    assert page.status_code == 200
    assert "Runbook 5" in page.content.decode()


def test_a_record_written_after_the_first_stage_is_listed_by_the_next_page(console, ordering_only):
    ordering_only.writer.remember(mob_scope("big", "ops"), "Runbook late", "Step late")

    assert panel(console, "records", {"realm": "big", "limit": 1}).result["records"][0]["title"] == "Runbook late"


def test_reads_needing_the_second_stage_answer_the_indexing_error_with_its_progress(console, ordering_only):
    for method, params in (
        ("overview", {"realm": "big"}),
        ("records", {"realm": "big", "status": "active"}),
        ("quarantine", {"realm": "big"}),
    ):
        error = panel(console, method, params).error
        assert error["code"] == REALM_INDEXING, method
        assert error["data"]["index"] == "realm-index"
        assert error["data"]["phase"] == "counting holdings and tile facts"
        assert error["data"]["percent"] == 10  # copying the order (10%) done


def test_the_second_stage_counts_what_was_written_meanwhile(console, ordering_only):
    panel(console, "records", {"realm": "big"})  # the first stage caught up before the write
    ordering_only.writer.remember(mob_scope("big", "ops"), "Runbook late", "Step late")
    assert panel(console, "records", {"realm": "big", "limit": 1}).result["records"][0]["title"] == "Runbook late"
    ordering_only.release()

    complete = REALM_INDEX.build("big")

    assert REALM_INDEX.stage_of(complete) is None
    with sqlite3.connect(complete) as conn:
        assert conn.execute("SELECT SUM(records) FROM holdings").fetchone() == (13,)
    active = panel(console, "records", {"realm": "big", "status": "active", "scope": "mob", "scope_key": "ops"}).result
    assert len(active["records"]) == 7
    assert not list(REALM_INDEX.directory("big").glob("gen-1.sqlite3"))  # the first stage retired


def test_a_first_stage_whose_builder_stopped_is_completed_when_next_read(console, ordering_only):
    ordering_only.release()  # the builder went away before the second stage

    panel(console, "records", {"realm": "big"})  # finds the first stage, completes it (inline in tests)

    assert REALM_INDEX.stage_of(REALM_INDEX.newest("big")) is None
    assert panel(console, "overview", {"realm": "big"}).result


def test_a_complete_index_is_rebuilt_whole_never_through_a_first_stage(console, ordering_only):
    ordering_only.release()
    complete = REALM_INDEX.build("big")

    rebuilt = REALM_INDEX.build("big")  # as a reconcile does: no first stage replaces the complete one

    assert int(rebuilt.stem.split("-")[1]) == int(complete.stem.split("-")[1]) + 1
    assert REALM_INDEX.stage_of(rebuilt) is None
