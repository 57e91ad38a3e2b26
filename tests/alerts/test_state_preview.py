"""The 7-day preview of state rules over a scripted week of real realm files: the quarantine queue
and the store floor replayed from the realm's history file through the evaluator's own threshold
and cooldown, with the exact times they would have fired; conditions whose past is not kept say
so; the preview names no record."""

from __future__ import annotations

import re

import pytest

from memory_panel.simulator.store_writer import create_op, identity_scope, new_record
from mobkit_console.alerts.conditions import now_ms
from mobkit_console.alerts.durations import moment
from mobkit_console.alerts.evaluator import alerts_tick
from mobkit_console.alerts.past import MOMENTS_MAX, replay_moments
from mobkit_console.alerts.selectors import rule_preview
from tests.support.alert_world import ScriptedRealm
from tests.support.clients import signed_in_client, user_with_subject
from tests.support.postures import ADMIN_READS, READER, ROOT

pytestmark = pytest.mark.django_db(transaction=True)

DAY, HOUR, MINUTE = 86_400_000, 3_600_000, 60_000
REVIEWER = {"kind": "operator", "principal": "root"}
RULE = '[[rules]]\nid = "{id}"\nwhen = "{when}"\n{extra}\nnotify = ["{url}"]\n'


def queue_week(realm: ScriptedRealm, now: int) -> dict[str, int]:
    """A week of arrivals in quarantine and reviews; the moments that matter, by name."""
    clock = realm.writer.clock
    at: dict[str, int] = {}

    def held(name: str, when: int) -> str:
        clock.set(when)
        at[name] = when
        return realm.quarantined_write(f"SECRET-HELD-{name}")

    def reviewed(when: int, *held_ids: str) -> None:
        clock.set(when)
        for memory_id in held_ids:
            realm.writer.review_quarantine(memory_id, "tombstone", reviewer=REVIEWER)

    z = held("z", now - 8 * DAY)  # waiting since before the week began
    a = held("a", now - 6 * DAY)  # the queue reaches 2
    reviewed(at["a"] + 30 * MINUTE, z)  # back to 1
    b = held("b", at["a"] + HOUR)  # 2 again
    reviewed(at["b"] + HOUR, a, b)  # empty
    c = held("c", at["b"] + DAY)
    held("d", at["c"] + MINUTE)  # 2 again
    reviewed(at["c"] + 2 * MINUTE, c)  # 1
    held("e", at["c"] + 3 * MINUTE)  # 2 within the 10-minute cooldown of the last notice
    return at


def test_the_queue_rules_replay_the_week_with_their_crossings(alert_rules, access_toml, realm_writer, receiver):
    access_toml(ADMIN_READS)
    rules = alert_rules(RULE.format(id="queue", when="quarantine.queue.length", extra="threshold = 2", url=receiver.url)
                        + RULE.format(id="oldest", when="quarantine.queue.oldest", extra='threshold = "36h"',
                                      url=receiver.url))
    realm = ScriptedRealm(realm_writer("default"))
    now = now_ms()
    at = queue_week(realm, now)

    queue = rule_preview(rule=rules.by_id["queue"], now=now)
    assert [(episode.at_ms, episode.notified) for episode in queue.episodes] == [
        (at["a"], True), (at["b"], True), (at["d"], True), (at["e"], False)]
    assert queue.episodes[0].summary == "2 records waiting in quarantine (default)"

    # The oldest waited 36h: z (waiting as the week began, for a day) 12h into the week, then d,
    # which still waits; c was reviewed before it got there.
    oldest = rule_preview(rule=rules.by_id["oldest"], now=now)
    assert [episode.at_ms for episode in oldest.episodes] == [at["z"] + 36 * HOUR, at["d"] + 36 * HOUR]
    assert oldest.episodes[1].summary == "the oldest quarantined record has waited 36h (default)"

    page = signed_in_client(user_with_subject(ROOT)).get("/console/alerts/").content.decode()
    assert "would have fired 4 times:" in page and "would have fired 2 times:" in page
    assert moment(at["b"]) in page and moment(at["d"] + 36 * HOUR) in page
    assert "(within the cooldown: no notice)" in page

    # The preview's last verdict is the evaluator's verdict on the present: both fire now.
    alerts_tick(check_state=True)
    assert sorted(notice["rule"] for notice in receiver.received) == ["oldest", "queue"]


def test_a_preview_names_no_record_whatever_the_rules_subject(alert_rules, access_toml, realm_writer, receiver):
    access_toml(ADMIN_READS)
    alert_rules(RULE.format(id="queue", when="quarantine.queue.length", extra=f'threshold = 2\nas_subject = "{READER}"',
                            url=receiver.url)
                + RULE.format(id="oldest", when="quarantine.queue.oldest",
                              extra=f'threshold = "1h"\nas_subject = "{READER}"', url=receiver.url))
    realm = ScriptedRealm(realm_writer("default"))
    queue_week(realm, now_ms())
    page = signed_in_client(user_with_subject(ROOT)).get("/console/alerts/").content.decode()
    assert "would have fired 4 times:" in page and "would have fired 2 times:" in page
    assert "SECRET-HELD" not in page  # the reader may not read a quarantined title


def test_the_store_floor_replays_each_scope_against_its_floor(alert_rules, access_toml, realm_writer, receiver):
    access_toml(ADMIN_READS)
    rules = alert_rules(RULE.format(id="floor", when="scope.floor", extra="", url=receiver.url)
                        + RULE.format(id="tile", when="tile.violated", extra='tile = "store-floor"', url=receiver.url))
    realm = ScriptedRealm(realm_writer("default"))
    writer, now = realm.writer, now_ms()
    scope = identity_scope("default", "identity:ana")
    writer.clock.set(now - 6 * DAY)
    writer.bulk_apply((create_op(scope, new_record(kind="fact", title=f"Filler {n}", body=f"Body {n}."))
                       for n in range(3999)), author={"author": "application"})
    crossings = []
    for day in (5, 3):  # the 4,000th active record, then one forgotten an hour later
        writer.clock.set(now - day * DAY)
        crossings.append(now - day * DAY)
        last = writer.remember(scope, f"Record on day {day}", "One more.")
        writer.clock.set(now - day * DAY + HOUR)
        writer.forget(last)

    for rule_id in ("floor", "tile"):
        preview = rule_preview(rule=rules.by_id[rule_id], now=now)
        assert [episode.at_ms for episode in preview.episodes] == crossings
        assert preview.episodes[0].summary == "STORE FLOOR is violated: 1 scope at issue (default)"


def test_a_state_whose_past_is_not_kept_says_so(alert_rules, access_toml, realm_writer, receiver):
    access_toml(ADMIN_READS)
    alert_rules(RULE.format(id="stale", when="replica.stale", extra="", url=receiver.url)
                + RULE.format(id="unreadable", when="realm.unreadable", extra="", url=receiver.url)
                + RULE.format(id="dead", when="records.dead", extra="threshold = 1", url=receiver.url)
                + RULE.format(id="lattice", when="tile.violated", extra='tile = "lattice"', url=receiver.url))
    ScriptedRealm(realm_writer("default"))
    page = signed_in_client(user_with_subject(ROOT)).get("/console/alerts/").content.decode()
    assert not re.search(r"would have fired \d", page)
    for reason in ("a replica copy&#x27;s lag is read from the copy as it is now; its past is not kept",
                   "whether a realm file could be read is not kept over time",
                   "turning DEAD depends on injections and usage, whose past the history file does not keep",
                   "LATTICE reads each record&#x27;s trust, which the audit rows do not carry"):
        assert f"no preview: {reason}" in page


def test_the_replay_moves_each_change_on_to_the_next_check_and_stays_bounded():
    start, now = 0, 7 * DAY
    assert replay_moments([1, 29_999, 30_000, 30_001, now + 5], start=start, now=now, step_ms=30_000) == [30_000, 60_000]
    busy = replay_moments(range(1, now, 60_000), start=start, now=now, step_ms=30_000)
    assert len(busy) <= MOMENTS_MAX and busy[-1] <= now
    assert busy[1] - busy[0] == 30_000 * 2 ** 4  # 10,080 changes a minute apart: the 30 s grid doubled 4 times
