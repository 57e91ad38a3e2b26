"""A firing rule removed from the rules file, or edited to watch something else, closes its open
alert with one resolved notice to the receivers the alert was opened with, sent once by two racing
evaluators and not again after a restart; an edit that keeps what the rule watches keeps the alert."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from mobkit_console.alerts.evaluator import alerts_tick
from mobkit_console.alerts.models import AlertState, Delivery
from tests.support.alert_receivers import SignedReceiver
from tests.support.alert_world import ScriptedRealm

pytestmark = pytest.mark.django_db(transaction=True)

RULE = '[[rules]]\nid = "{id}"\nwhen = "{when}"\n{extra}\nnotify = ["{url}"]\n'


def notices(receiver: SignedReceiver) -> list[tuple[str, str]]:
    return [(notice["notice"], notice["alert_id"]) for notice in receiver.received]


def racing_ticks() -> None:
    threads = [threading.Thread(target=lambda: (alerts_tick(check_state=True), connections.close_all()))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)


def test_a_removed_firing_rule_resolves_once_to_its_receivers(alert_rules, realm_writer, receiver, second_receiver):
    kept = RULE.format(id="unreadable", when="realm.unreadable", extra="", url=second_receiver.url)
    alert_rules(RULE.format(id="queue", when="quarantine.queue.length", extra="threshold = 1", url=receiver.url)
                + kept)
    realm = ScriptedRealm(realm_writer("default"))
    realm.quarantined_write("Held while the rule goes")
    alerts_tick(check_state=True)
    [(notice, alert_id)] = notices(receiver)
    assert notice == "firing"

    alert_rules(kept)  # the rule is gone; its receiver is named nowhere in the file now
    racing_ticks()
    assert notices(receiver) == [("firing", alert_id), ("resolved", alert_id)]
    assert second_receiver.received == []
    assert not AlertState.objects.filter(firing=True).exists()

    alert_rules(kept)  # a restart: the rules read afresh, the evaluator resumes from the database
    alerts_tick(check_state=True)
    alerts_tick(check_state=True)
    assert len(receiver.received) == 2
    assert Delivery.objects.filter(notice="resolved").count() == 1


def test_a_rule_edited_to_watch_something_else_closes_its_alert(alert_rules, realm_writer, receiver, second_receiver):
    queue = RULE.format(id="held", when="quarantine.queue.length", extra="threshold = 1", url=receiver.url)
    alert_rules(queue)
    realm = ScriptedRealm(realm_writer("default"))
    realm.quarantined_write("Held across edits")
    alerts_tick(check_state=True)
    [(_, opened)] = notices(receiver)

    # Another cooldown and receiver, the same condition: the same alert goes on firing.
    edited = queue.replace("threshold = 1", 'threshold = 1\ncooldown = "1h"')
    alert_rules(edited.replace(receiver.url, second_receiver.url))
    alerts_tick(check_state=True)
    assert len(receiver.received) == 1 and second_receiver.received == []

    # Another condition under the same id: the old alert resolves to the receiver it was opened
    # with, and the new one fires to the rule's receiver now.
    alert_rules(RULE.format(id="held", when="quarantine.queue.oldest", extra='threshold = "1s"',
                            url=second_receiver.url))
    realm.writer.clock.advance(5_000)
    alerts_tick(now=realm.writer.clock.now_ms, check_state=True)
    assert notices(receiver) == [("firing", opened), ("resolved", opened)]
    [(notice, reopened)] = notices(second_receiver)
    assert notice == "firing" and reopened != opened
    assert second_receiver.received[0]["condition"] == "quarantine.queue.oldest"
    assert receiver.received[1]["condition"] == "quarantine.queue.length"
