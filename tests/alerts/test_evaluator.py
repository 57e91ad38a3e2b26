"""The evaluator over a scripted realm history: a quarantined write fires one notice and its
clearing one "resolved"; two workers send it once; a restart mid-delivery neither loses nor
repeats it; a rule's subject bounds what the notice says."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from mobkit_console.alerts.conditions import now_ms
from mobkit_console.alerts.delivery import deliveries_send_due
from mobkit_console.alerts.evaluator import alerts_tick
from mobkit_console.alerts.models import AlertState, Delivery
from mobkit_console.alerts.selectors import rule_preview
from mobkit_console.timeline.follower import RealmFollower
from tests.support.alert_world import ScriptedRealm
from tests.support.postures import ADMIN_READS, READER, REVIEWER, REVIEWS, SCOUT

pytestmark = pytest.mark.django_db(transaction=True)

QUARANTINE_RULE = """
[[rules]]
id = "quarantine-luka"
when = "quarantine.arrived"
window = "10m"
cooldown = "1m"
notify = ["{url}"]
{extra}
"""


def test_a_quarantined_write_fires_once_and_resolves_when_its_window_passes(alert_rules, realm_writer, receiver):
    alert_rules(QUARANTINE_RULE.format(url=receiver.url, extra='identity = "identity:luka"\ntainted_only = true'))
    realm = ScriptedRealm(realm_writer("default"))
    alerts_tick()  # the cursor starts at the timeline's end
    memory_id = realm.quarantined_write("Wire the funds today")
    assert realm.follow() == 1

    report = alerts_tick()
    assert (report.opened, report.sent) == (1, 1)
    assert alerts_tick().opened == 0  # nothing new: no second notice
    [firing] = receiver.received
    assert firing["notice"] == "firing" and firing["rule"] == "quarantine-luka" and firing["key"] == "default"
    assert memory_id in firing["body"] and "QUARANTINED BODY" not in firing["body"]
    assert "Wire the funds" not in firing["body"]  # no as_subject: ids and counts only

    state = AlertState.objects.get(rule_id="quarantine-luka")
    assert state.firing
    later = now_ms() + 11 * 60_000
    assert alerts_tick(now=later).resolved == 1
    deliveries_send_due(now=later)
    resolved = receiver.received[-1]
    assert resolved["notice"] == "resolved" and resolved["alert_id"] == firing["alert_id"]
    assert len(receiver.received) == 2


def test_a_write_into_another_identity_does_not_match_the_rule(alert_rules, realm_writer, receiver):
    alert_rules(QUARANTINE_RULE.format(url=receiver.url, extra='identity = "identity:luka"'))
    realm = ScriptedRealm(realm_writer("default"))
    alerts_tick()
    realm.quarantined_write("Scout's page", identity=SCOUT)
    realm.follow()
    assert alerts_tick().opened == 0 and receiver.received == []


def test_two_workers_send_one_notice(alert_rules, realm_writer, receiver):
    alert_rules(QUARANTINE_RULE.format(url=receiver.url, extra=""))
    realm = ScriptedRealm(realm_writer("default"))
    alerts_tick()
    realm.quarantined_write("Twice told")
    realm.follow()

    # Two processes' followers: only the lease holder evaluates (realms_followed).
    first = RealmFollower(holder="worker-a", interval_s=0.05, lease_s=15)
    second = RealmFollower(holder="worker-b", interval_s=0.05, lease_s=15)
    threads = [threading.Thread(target=lambda f=f: (f.run(threading.Event(), once=True), connections.close_all()))
               for f in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    # And two evaluators racing on the same tick commit it once (the cursor row is locked).
    racing = [threading.Thread(target=lambda: (alerts_tick(), connections.close_all())) for _ in range(2)]
    for thread in racing:
        thread.start()
    for thread in racing:
        thread.join(30)
    assert len(receiver.received) == 1
    assert Delivery.objects.count() == 1


def test_a_restart_mid_delivery_neither_loses_nor_repeats_the_notice(alert_rules, realm_writer, receiver, settings):
    rules_text = QUARANTINE_RULE.format(url=receiver.url, extra="")
    realm = ScriptedRealm(realm_writer("default"))
    # The receiver is down while the alert opens: the transition is committed, the delivery owed.
    alert_rules(rules_text.replace(receiver.url, "mobkit+http://127.0.0.1:9/down"))
    alerts_tick()
    realm.quarantined_write("Owed a notice")
    realm.follow()
    report = alerts_tick()
    assert (report.opened, report.sent) == (1, 0)
    owed = Delivery.objects.get()
    assert owed.status == "pending" and owed.attempts == 1

    # "Restart": a new process reads the rules afresh and its first tick sees the committed state.
    Delivery.objects.filter(id=owed.id).update(target=receiver.url)
    alert_rules(rules_text)
    later = now_ms() + 1000
    assert alerts_tick(now=later).opened == 0
    deliveries_send_due(now=later)
    alerts_tick(now=later + 1000)
    assert [notice["alert_id"] for notice in receiver.received] == [owed.alert_id]


def test_a_reader_bounded_rule_never_carries_a_title_its_subject_may_not_read(
        alert_rules, realm_writer, receiver, access_toml):
    access_toml(ADMIN_READS + REVIEWS)  # READER reads active records; only REVIEWER reviews quarantine
    alert_rules(QUARANTINE_RULE.format(url=receiver.url, extra=f'as_subject = "{READER}"')
                + QUARANTINE_RULE.format(url=receiver.url, extra=f'as_subject = "{REVIEWER}"')
                .replace("quarantine-luka", "quarantine-reviewers")
                + f'\n[[rules]]\nid = "burst"\nwhen = "writes.burst"\nthreshold = 2\nas_subject = "{READER}"\n'
                  f'notify = ["{receiver.url}"]\n')
    realm = ScriptedRealm(realm_writer("default"))
    alerts_tick()
    realm.quarantined_write("SECRET-QUARANTINED-TITLE")
    realm.remember("Readable note one")
    realm.remember("Readable note two")
    realm.follow()
    alerts_tick()
    by_rule = {notice["rule"]: notice for notice in receiver.received}
    assert "SECRET-QUARANTINED-TITLE" not in by_rule["quarantine-luka"]["body"]
    assert "SECRET-QUARANTINED-TITLE" not in by_rule["quarantine-luka"]["title"]
    assert "SECRET-QUARANTINED-TITLE" in by_rule["quarantine-reviewers"]["body"]  # reviewers may read it
    assert "Readable note two" in by_rule["burst"]["body"]
    assert all("QUARANTINED BODY" not in notice["body"] for notice in receiver.received)


def test_the_preview_replays_the_week_with_the_evaluators_count(alert_rules, realm_writer, receiver):
    rules = alert_rules(QUARANTINE_RULE.format(url=receiver.url, extra=""))
    realm = ScriptedRealm(realm_writer("default"))
    start = now_ms() - 3 * 86_400_000
    for offset_min in (0, 5, 60, 120):  # two inside one 10-minute window, then two apart
        realm.writer.clock.set(start + offset_min * 60_000)
        realm.quarantined_write(f"Arrival at {offset_min}")
    realm.follow()
    preview = rule_preview(rule=rules.by_id["quarantine-luka"], now=now_ms())
    assert preview.supported and preview.firings == 3
