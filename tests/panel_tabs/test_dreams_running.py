"""A running steward dream, decided from the store (docs/timeline-live.md §2): shown on the Dreams page
from its first render, and no longer once the run's sheet is written."""

from __future__ import annotations

import re

from memory_panel.selectors import dreams
from memory_panel.selectors.dreams import RUNNING_QUIET_MS, running_dreams
from memory_panel.store.realm_index import build, realm_index
from memory_panel.simulator.store_writer import APPLICATION, batch, create_op, mob_scope, new_record, realm_scope, wall_clock_ms
from access.caller import Caller, access_for
from tests.support.postures import SCOUT_READER

URL = "/console/memory/dreams/"
HX = {"HX-Request": "true"}


def _dream_commit(writer, run_id: str, title: str = "Consolidated the ops gotchas") -> None:
    """One commit group of a steward run: what the store holds of a run before its sheet."""
    writer.steward_batch(run_id, [create_op(realm_scope(writer.realm), new_record(kind="fact", title=title, body="b"))])


def _running_box(page: str) -> str:
    return re.search(r"<div class=\"live-running\" data-live-running[^>]*>.*?</div>", page, re.S).group(0)


def test_a_dream_already_running_when_the_page_loads_shows_as_running_until_its_sheet_is_written(
    client_for, realm_writer, read_path
):
    realm_writer.clock.set(wall_clock_ms())
    writer = realm_writer("default")
    writer.remember(mob_scope("default", "ops"), "Deploys on Tuesdays", "Agreed in standup.")
    run_id = writer.new_dream_run_id()
    started = realm_writer.clock()
    _dream_commit(writer, run_id)
    realm_writer.clock.advance(2_000)
    _dream_commit(writer, run_id, "Ranked the working set")
    if read_path == "index":
        build("default")

    page = client_for().get(URL).content.decode()  # first render: no event has been seen

    box = _running_box(page)
    assert " hidden" not in box.split(">", 1)[0]
    assert f'data-run-id="{run_id}"' in box and "2 ops committed so far" in box
    card = page.split(f'title="run {run_id}"', 1)[1].split("</details>", 1)[0]
    assert ">running</span>" in card and "Still running" in card

    realm_writer.clock.advance(1_000)
    writer.record_dream_run(run_id, started_at_ms=started, ops_committed=2, phases=[("consolidate", "2 ops")])
    refetched = client_for().get(URL, headers=HX).content.decode()  # what the live panel re-fetches

    box = _running_box(refetched)
    assert " hidden" in box.split(">", 1)[0] and "data-run-id" not in box
    card = refetched.split(f'title="run {run_id}"', 1)[1].split("</details>", 1)[0]
    assert ">running</span>" not in card and "Partition <code>realm</code>" in card


def test_an_indexed_realm_finds_a_running_dream_behind_more_writes_than_the_audit_scan(
    client_for, realm_writer, settings, monkeypatch
):
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    monkeypatch.setattr(dreams, "RUNNING_AUDIT_SCAN", 3)
    realm_writer.clock.set(wall_clock_ms())
    writer = realm_writer("default")
    run_id = writer.new_dream_run_id()
    _dream_commit(writer, run_id)
    for n in range(5):  # newer than the run's rows, and more of them than a direct read looks at
        writer.apply_batch(batch(realm="default", author=APPLICATION,
                                 ops=[create_op(mob_scope("default", "ops"), new_record(kind="fact", title=f"n{n}", body="b"))]))
    build("default")
    assert realm_index("default") is not None

    page = client_for().get(URL).content.decode()

    assert f'data-run-id="{run_id}"' in _running_box(page)


def test_a_run_without_a_sheet_is_not_running_once_quiet_for_long_or_in_the_older_format(
    realm_writer, realm_aliases_allowed
):
    now = wall_clock_ms()
    realm_writer.clock.set(now)
    current = realm_writer("current")
    _dream_commit(current, "dream-stopped")
    older = realm_writer("older", format="older")
    _dream_commit(older, "dream-old-format")  # the older format keeps no sheets: nothing could say it ended
    access = access_for(Caller(subject=None))

    assert [run.run_id for run in running_dreams(access=access, realm=None, now_ms=now)[0]] == ["dream-stopped"]
    quiet = running_dreams(access=access, realm=None, now_ms=now + RUNNING_QUIET_MS + 1)[0]
    assert quiet == []  # it stopped without writing a sheet (a failed run)


def test_without_realm_history_no_running_dream_is_shown(client_for, realm_writer, posture):
    realm_writer.clock.set(wall_clock_ms())
    _dream_commit(realm_writer("default"), "dream-hidden-run")
    posture("standard")

    page = client_for(SCOUT_READER).get(URL).content.decode()

    assert "dream-hidden-run" not in page and "data-run-id" not in page


def test_a_running_run_id_is_shown_as_text(client_for, realm_writer):
    realm_writer.clock.set(wall_clock_ms())
    _dream_commit(realm_writer("default"), 'dream-"><img src=x onerror=alert(1)>')

    box = _running_box(client_for().get(URL).content.decode())

    assert "<img" not in box and "&lt;img src=x onerror=alert(1)&gt;" in box
