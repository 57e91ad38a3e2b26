"""The pages with charts: each chart an SVG with its numbers as a table, no inline style, no
chart for a caller who may not see its counts (docs/charts.md §1)."""

from __future__ import annotations

import re

import pytest

from tests.support.postures import READER, REVIEWER, SCOUT_READER


@pytest.fixture
def pages(dated_realm, client_for, posture):
    posture("standard")
    return client_for


def test_holdings_draws_status_bytes_and_injections_with_tables(pages):
    page = pages(REVIEWER).get("/console/memory/?realm=dated").content.decode()

    for chart in ("records-by-status", "bytes-against-floor", "injections-by-surface", "never-injected"):
        figure = page.split(f'id="chart-{chart}"', 1)[1].split("</figure>", 1)[0]
        assert "<svg" in figure and "<table" in figure
    assert 'class="sparkline" role="img"' in page
    assert " style=" not in page


def test_a_reader_sees_no_quarantined_series(pages):
    page = pages(READER).get("/console/memory/?realm=dated").content.decode()
    status = page.split('id="chart-records-by-status"', 1)[1].split("</figure>", 1)[0]

    assert ">Quarantined</th>" not in status
    assert "counted for reviewers only" in status


def test_quarantine_page_charts_for_a_reviewer_only(pages):
    reviewer = pages(REVIEWER).get("/console/memory/quarantine/?realm=dated&days=90").content.decode()
    assert 'id="chart-queue-depth"' in reviewer and 'aria-current="true" class="chip">90 days' in reviewer

    reader = pages(READER).get("/console/memory/quarantine/?realm=dated")
    assert b"chart-queue-depth" not in reader.content


def test_dreams_page_charts_runs(pages):
    page = pages(READER).get("/console/memory/dreams/?realm=dated").content.decode()
    assert 'id="chart-dream-runs"' in page and 'id="chart-dream-ops"' in page


def test_realm_list_sparkline_counts_only_readable_records(pages):
    page = pages(SCOUT_READER).get("/console/").content.decode()
    # identity:luka alone: d and e on day 0 and the released successor of q1 on day 2.
    assert re.search(r'aria-label="3 records created in the last 30 days, at most 2 a day"', page)


def test_a_bad_window_is_a_400_naming_days(pages):
    response = pages(REVIEWER).get("/console/memory/?realm=dated&days=7")
    assert response.status_code == 400
    assert b"days must be one of 30, 90" in response.content


def test_across_realms_the_bytes_chart_names_each_scope_with_its_realm(pages):
    page = pages(REVIEWER).get("/console/memory/").content.decode()
    floor = page.split('id="chart-bytes-against-floor"', 1)[1].split("</figure>", 1)[0]

    assert "dated · identity:luka" in floor


def test_a_day_without_verdicts_has_no_wait_rather_than_a_zero(pages):
    page = pages(REVIEWER).get("/console/memory/quarantine/?realm=dated").content.decode()
    wait = page.split('id="chart-verdict-wait"', 1)[1].split("</figure>", 1)[0]

    assert wait.count("<polyline") == 2  # one dot per series: the one day with verdicts
    assert '<td class="num">—</td>' in wait and '<td class="num">36</td>' in wait
