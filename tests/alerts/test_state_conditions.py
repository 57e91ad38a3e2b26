"""State conditions over real realm files, checked periodically: each fires on the present
state and resolves once it clears."""

from __future__ import annotations

import pytest

from memory_panel.simulator.store_writer import agent, identity_scope
from mobkit_console.alerts.evaluator import alerts_tick
from mobkit_console.alerts.models import AlertState
from tests.support.alert_world import ScriptedRealm
from tests.support.clients import signed_in_client, user_with_subject
from tests.support.postures import LUKA, READER

pytestmark = pytest.mark.django_db(transaction=True)

RULE = '[[rules]]\nid = "{id}"\nwhen = "{when}"\n{extra}\nnotify = ["{url}"]\n'


def notices(receiver) -> list[tuple[str, str, str]]:
    return [(notice["rule"], notice["notice"], notice["key"]) for notice in receiver.received]


def test_a_long_quarantine_queue_fires_and_resolves_when_reviewed(alert_rules, realm_writer, receiver):
    alert_rules(RULE.format(id="queue", when="quarantine.queue.length", extra="threshold = 2", url=receiver.url)
                + RULE.format(id="oldest", when="quarantine.queue.oldest", extra='threshold = "1h"', url=receiver.url))
    realm = ScriptedRealm(realm_writer("default"))
    first = realm.quarantined_write("First held write")
    alerts_tick(check_state=True)
    assert notices(receiver) == []
    realm.writer.clock.advance(2 * 3_600_000)
    second = realm.quarantined_write("Second held write")
    alerts_tick(now=realm.writer.clock.now_ms, check_state=True)
    assert sorted(notices(receiver)) == [("oldest", "firing", "default"), ("queue", "firing", "default")]

    for held in (first, second):
        realm.writer.review_quarantine(held, "tombstone", reviewer={"kind": "operator", "principal": "root"})
    alerts_tick(now=realm.writer.clock.now_ms, check_state=True)
    assert sorted(notices(receiver)[2:]) == [("oldest", "resolved", "default"), ("queue", "resolved", "default")]


def test_a_violated_verdict_tile_fires_and_resolves(alert_rules, realm_writer, receiver):
    alert_rules(RULE.format(id="lattice", when="tile.violated", extra='tile = "lattice"', url=receiver.url))
    realm = ScriptedRealm(realm_writer("default"))
    fact = realm.writer.remember(identity_scope("default", LUKA), "Luka flies from Lisbon", "LIS.", author=agent(LUKA))
    alerts_tick(check_state=True)
    assert notices(receiver) == []
    trust = realm.writer.conn.execute("SELECT trust FROM records WHERE memory_id = ?", (fact,)).fetchone()[0]
    # A violation MobKit's own validator refuses can still reach a file (a hand edit, a bug).
    realm.writer.conn.execute("UPDATE records SET trust = 'operator' WHERE memory_id = ?", (fact,))
    realm.writer.conn.commit()
    alerts_tick(check_state=True)
    assert notices(receiver) == [("lattice", "firing", "default")]
    assert fact in receiver.received[0]["body"]
    holdings = signed_in_client(user_with_subject(READER)).get("/console/memory/").content.decode()
    assert "Alert firing since" in holdings and "LATTICE is violated" in holdings
    realm.writer.conn.execute("UPDATE records SET trust = ? WHERE memory_id = ?", (trust, fact))
    realm.writer.conn.commit()
    alerts_tick(check_state=True)
    assert notices(receiver)[-1] == ("lattice", "resolved", "default")


def test_a_realm_file_that_cannot_be_read_fires(alert_rules, realm_writer, agent_memory_dir, receiver):
    alert_rules(RULE.format(id="unreadable", when="realm.unreadable", extra="", url=receiver.url))
    ScriptedRealm(realm_writer("default"))
    broken = agent_memory_dir / "broken.sqlite3"
    broken.write_bytes(b"this is not a database" * 100)
    alerts_tick(check_state=True)
    assert notices(receiver) == [("unreadable", "firing", "broken")]
    broken.unlink()
    alerts_tick(check_state=True)
    assert notices(receiver)[-1] == ("unreadable", "resolved", "broken")
    assert not AlertState.objects.filter(firing=True).exists()


def test_records_turning_dead_fire_but_those_dead_before_the_rule_do_not(alert_rules, realm_writer, receiver):
    alert_rules(RULE.format(id="dead", when="records.dead", extra='threshold = 2\nwindow = "1h"', url=receiver.url))
    realm = ScriptedRealm(realm_writer("default"))
    scope = identity_scope("default", LUKA)
    old, first, second = (realm.writer.remember(scope, f"Note {n}", "Never useful.") for n in range(3))

    def inject_three_times(memory_id: str) -> None:
        for turn in range(3):
            realm.writer.record_injection(memory_id, LUKA, session_key=f"sess-{memory_id}-{turn}")

    inject_three_times(old)  # DEAD before the rule's first check: old news
    alerts_tick(check_state=True)
    inject_three_times(first)
    alerts_tick(check_state=True)
    assert notices(receiver) == []  # one turned DEAD: below the threshold
    inject_three_times(second)
    alerts_tick(check_state=True)
    assert notices(receiver) == [("dead", "firing", "default")]
    assert first in receiver.received[0]["body"] and old not in receiver.received[0]["body"]
    realm.writer.mark_usage(second, "judged_useful")  # no longer DEAD
    alerts_tick(check_state=True)
    assert notices(receiver)[-1] == ("dead", "resolved", "default")
