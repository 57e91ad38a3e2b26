"""Chart series against a realm written on known days, under every access posture: exact daily
counts, and no count of a row the caller may not list (docs/charts.md §3, docs/access.md §2.8)."""

from __future__ import annotations

import datetime

import pytest

from access.caller import Caller, access_for
from memory_panel.errors import InvalidParams
from memory_panel.selectors import charts
from tests.support.dated_realm import FIRST_DAY, OPERATOR_SCOPE, Account
from tests.support.postures import CALLERS, LUKA, SCOUT, use_caller_posture

# What each posture may list, in the tests' own words (docs/access.md §2.6): the scopes it reads,
# and whether it reviews (sees quarantined rows and retired quarantine evidence).
EVERY_SCOPE = {("identity", SCOUT), ("identity", LUKA), OPERATOR_SCOPE}
READS = {
    "open": (EVERY_SCOPE, True),
    "reader": (EVERY_SCOPE, False),
    "partial": ({("identity", SCOUT), ("identity", LUKA)}, False),
    "scoped": ({("identity", SCOUT)}, False),
    "none": (set(), False),
    "reviewer": (EVERY_SCOPE, True),
    "bare_reviewer": (set(), True),
    "admin": (EVERY_SCOPE, True),
}
assert set(READS) == set(CALLERS)
DAYS = 30
LAST = FIRST_DAY + 2  # the realm's newest day ends the window


def offset(day: int) -> int:
    return DAYS - 1 - (LAST - day)


def expected_flows(account: Account, posture: str) -> dict[str, list[int]]:
    scopes, reviews = READS[posture]
    flows = {e: [0] * DAYS for e in ("created", "quarantined", "superseded", "tombstoned")}
    for day, scope, event, reviewer_only in account.events:
        if scope in scopes and (reviews or not reviewer_only):
            flows["tombstoned" if event in ("released", "rejected") else event][offset(day)] += 1
    if not reviews:
        del flows["quarantined"]
    return flows


@pytest.fixture
def access_under(tmp_path, settings):
    def load(name: str):
        return access_for(Caller(subject=use_caller_posture(settings, tmp_path, name)))

    return load


def by_id(chart_set) -> dict[str, charts.Chart]:
    return {chart.id: chart for chart in chart_set.charts}


@pytest.mark.parametrize("posture", sorted(CALLERS))
def test_records_by_status_count_exactly_what_the_caller_may_list(dated_realm, access_under, posture):
    got = by_id(charts.holdings_charts(access=access_under(posture), realm="dated", days=DAYS))["records-by-status"]

    assert got.days[-1] == datetime.date(1970, 1, 1) + datetime.timedelta(days=LAST)
    assert {s.key: s.values for s in got.series} == expected_flows(dated_realm, posture)


@pytest.mark.parametrize("posture", sorted(CALLERS))
def test_injections_by_surface_follow_identity_and_record_scope(dated_realm, access_under, posture):
    scopes, _ = READS[posture]
    expected: dict[str, list[int]] = {}
    for day, surface, identity, scope in dated_realm.injections:
        if ("identity", identity) in scopes and scope in scopes:
            expected.setdefault(f"surface-{surface}", [0] * DAYS)[offset(day)] += 1

    got = by_id(charts.injection_charts(access=access_under(posture), realm="dated", days=DAYS))

    assert {s.key: s.values for s in got["injections-by-surface"].series} == expected


@pytest.mark.parametrize("posture", sorted(CALLERS))
def test_never_injected_and_dead_are_levels_of_readable_records(dated_realm, access_under, posture):
    scopes, reviews = READS[posture]
    S, L = ("identity", SCOUT), ("identity", LUKA)
    # New records per day (quarantined ones for reviewers), minus each record's first injection.
    created = {d: sum(1 for day, scope, event, ro in dated_realm.events
                      if day == FIRST_DAY + d and scope in scopes and event in ("created", "quarantined") and (reviews or not ro))
               for d in range(3)}
    first = {0: set(), 1: {S, L}, 2: {OPERATOR_SCOPE}}
    level, never = 0, []
    for d in range(3):
        level += created[d] - len(first[d] & scopes)
        never.append(level)
    dead = [0, 1, 1] if S in scopes else [0, 0, 0]

    got = by_id(charts.injection_charts(access=access_under(posture), realm="dated", days=DAYS))["never-injected"]
    values = {s.key: s.values[-3:] for s in got.series}

    assert values == {"never": never, "dead": dead}
    assert all(v == 0 for s in got.series for v in s.values[:-3])


def test_bytes_end_at_what_holdings_counts_for_a_reviewer(dated_realm, access_under):
    from memory_panel.selectors.holdings import realm_holdings

    got = by_id(charts.holdings_charts(access=access_under("reviewer"), realm="dated", days=DAYS))["bytes-against-floor"]
    now = {f"{h.scope_key}" if h.scope_kind == "identity" else f"{h.scope_kind}:{h.scope_key}": h.body_bytes
           for h in realm_holdings("dated", with_quarantined=True)}

    assert {s.label: s.values[-1] for s in got.series} == now
    assert got.threshold == 33_554_432


@pytest.mark.parametrize("posture", ["reader", "partial", "scoped", "none"])
def test_a_reader_gets_no_quarantine_charts(dated_realm, access_under, posture):
    assert charts.quarantine_charts(access=access_under(posture), realm="dated", days=DAYS) is None


def test_quarantine_arrivals_verdicts_depth_and_waits_for_a_reviewer(dated_realm, access_under):
    got = by_id(charts.quarantine_charts(access=access_under("reviewer"), realm="dated", days=DAYS))

    flow = {s.key: s.values[-3:] for s in got["quarantine-flow"].series}
    assert flow == {"quarantined": [1, 1, 0], "released": [0, 0, 1], "rejected": [0, 0, 1]}
    assert got["queue-depth"].series[0].values[-3:] == [1, 2, 0]
    # q1 waited two days, q2 one: both verdicts on day 2.
    waits = {s.key: s.values[-3:] for s in got["verdict-wait"].series}
    assert waits == {"median": [None, None, 36], "worst": [None, None, 48]}  # no verdict, no wait drawn
    assert "2 verdicts; median wait 36.0 hours, worst 2.0 days" in got["verdict-wait"].note


def test_a_reviewer_without_reads_counts_nothing_in_the_queue(dated_realm, access_under):
    got = charts.quarantine_charts(access=access_under("bare_reviewer"), realm="dated", days=DAYS)

    assert all(chart.empty for chart in got.charts)


@pytest.mark.parametrize("posture,shown", [("open", True), ("admin", True), ("reader", True), ("scoped", False), ("none", False)])
def test_dream_runs_and_ops_by_kind(dated_realm, access_under, posture, shown):
    got = charts.dream_charts(access=access_under(posture), realm="dated", days=DAYS)

    if not shown:
        assert got is None
        return
    charted = by_id(got)
    assert charted["dream-runs"].series[0].values[-3:] == [0, 0, 1]
    assert {s.key: s.values[-3:] for s in charted["dream-ops"].series} == {"op-set_rank": [0, 0, 1]}


@pytest.mark.parametrize("posture", sorted(CALLERS))
def test_realm_sparkline_counts_readable_creations(dated_realm, access_under, posture):
    scopes, reviews = READS[posture]
    expected = [0] * 30
    for day, scope, event, reviewer_only in dated_realm.events:
        if event in ("created", "quarantined") and scope in scopes and (reviews or not reviewer_only):
            expected[offset(day)] += 1

    assert charts.realm_sparklines(access=access_under(posture), names=["dated"]) == {"dated": expected}


def test_counts_follow_new_writes(dated_realm, realm_writer, access_under):
    from memory_panel.store import daily_counts

    access = access_under("open")
    charts.holdings_charts(access=access, realm="dated", days=DAYS)
    writer = realm_writer.writers[0]
    realm_writer.clock.advance(1)
    writer.remember({"scope": "operator", "realm": "dated", "operator": "oncall"}, "late", "a late note")

    got = by_id(charts.holdings_charts(access=access, realm="dated", days=DAYS))["records-by-status"]

    assert {s.key: s.values[-1] for s in got.series}["created"] == 2
    with daily_counts.DAILY_COUNTS.connect("dated") as conn:
        assert conn.execute("SELECT SUM(records) FROM record_days WHERE event = 'created'").fetchone()[0] == 9


def test_a_realm_restored_in_place_is_counted_again(dated_realm, realm_writer, access_under, agent_memory_dir):
    from memory_panel.store import daily_counts

    access = access_under("open")
    charts.holdings_charts(access=access, realm="dated", days=DAYS)
    with daily_counts.DAILY_COUNTS.connect("dated") as conn:
        conn.execute("UPDATE meta SET value = 'another' WHERE key = 'audit_token'")
        conn.execute("UPDATE record_days SET records = records + 100")

    got = by_id(charts.holdings_charts(access=access, realm="dated", days=DAYS))["records-by-status"]

    assert {s.key: s.values for s in got.series} == expected_flows(dated_realm, "open")


@pytest.mark.parametrize("raw", ["7", "abc", "-30", "30.0"])
def test_a_window_other_than_30_or_90_days_is_refused(raw):
    with pytest.raises(InvalidParams, match="days must be one of 30, 90"):
        charts.parse_window(raw)


def test_counted_in_small_chunks_the_counts_are_the_same(dated_realm, access_under, monkeypatch, settings):
    from memory_panel.store import daily_counts

    settings.MOBKIT_REALM_INDEX_BACKGROUND = False  # the backlog's count runs in this thread
    monkeypatch.setattr(daily_counts.DAILY_COUNTS, "inline_rows", 1)  # every count a backlog, run in chunks
    monkeypatch.setattr(daily_counts, "CHUNK_ROWS", 2)
    access = access_under("reviewer")

    status = by_id(charts.holdings_charts(access=access, realm="dated", days=DAYS))["records-by-status"]
    injections = by_id(charts.injection_charts(access=access, realm="dated", days=DAYS))

    assert {s.key: s.values for s in status.series} == expected_flows(dated_realm, "reviewer")
    assert {s.key: s.values[-3:] for s in injections["injections-by-surface"].series} == {
        "surface-build": [0, 3, 0], "surface-turn": [0, 1, 1]}
    assert {s.key: s.values[-3:] for s in injections["never-injected"].series} == {"never": [7, 7, 7], "dead": [0, 1, 1]}


def test_deleting_the_daily_counts_counts_them_again(dated_realm, access_under):
    import shutil

    from memory_panel.store import daily_counts

    access = access_under("open")
    charts.holdings_charts(access=access, realm="dated", days=DAYS)
    shutil.rmtree(daily_counts.DAILY_COUNTS.directory())

    status = by_id(charts.holdings_charts(access=access, realm="dated", days=DAYS))["records-by-status"]

    assert {s.key: s.values for s in status.series} == expected_flows(dated_realm, "open")


@pytest.mark.parametrize("posture", sorted(CALLERS))
def test_bytes_name_only_scopes_the_caller_may_read(dated_realm, access_under, posture):
    scopes, _ = READS[posture]
    got = by_id(charts.holdings_charts(access=access_under(posture), realm="dated", days=DAYS))["bytes-against-floor"]

    named = {s.label for s in got.series}
    assert named == {key if kind == "identity" else f"{kind}:{key}" for kind, key in scopes}


def test_a_backlog_counted_in_the_background_ends_exact(dated_realm, access_under, monkeypatch, settings):
    import time

    from memory_panel.store import daily_counts

    settings.MOBKIT_REALM_INDEX_BACKGROUND = True
    monkeypatch.setattr(daily_counts.DAILY_COUNTS, "inline_rows", 1)
    monkeypatch.setattr(daily_counts, "CHUNK_ROWS", 2)
    access = access_under("open")
    charts.holdings_charts(access=access, realm="dated", days=DAYS)  # starts the count; draws what is counted
    deadline = time.monotonic() + 30
    while daily_counts.counting("dated") and time.monotonic() < deadline:
        time.sleep(0.05)

    got = charts.holdings_charts(access=access, realm="dated", days=DAYS)

    assert got.counting == []
    assert {s.key: s.values for s in by_id(got)["records-by-status"].series} == expected_flows(dated_realm, "open")


def test_counts_caught_up_at_once_by_many_threads_count_each_row_once(dated_realm, access_under, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from memory_panel.store import daily_counts

    monkeypatch.setattr(daily_counts, "CHUNK_ROWS", 2)
    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(lambda _: daily_counts.DAILY_COUNTS.catch_up("dated"), range(4)))

    got = by_id(charts.holdings_charts(access=access_under("open"), realm="dated", days=DAYS))["records-by-status"]
    assert {s.key: s.values for s in got.series} == expected_flows(dated_realm, "open")
