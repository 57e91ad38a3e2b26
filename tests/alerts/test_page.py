"""``/console/alerts/``: for console admins and access.admin holders only; rules with state and
preview, the delivery log paged by keyset, a test send (POST with CSRF, audited); the Quarantine
page says when an alert about it fires."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from mobkit_console.alerts.conditions import now_ms
from mobkit_console.alerts.delivery import deliveries_test
from mobkit_console.alerts.evaluator import alerts_tick
from mobkit_console.audit.models import AuditEntry
from mobkit_console.audit.services import audit_flush
from tests.support.alert_world import ScriptedRealm
from tests.support.clients import user_with_subject
from tests.support.postures import ADMIN_READS, READER, REVIEWER, REVIEWS, ROOT

pytestmark = pytest.mark.django_db(transaction=True)

RULES = """
[[rules]]
id = "held-<b>writes</b>"
when = "quarantine.arrived"
notify = ["{url}"]
"""


def client_of(subject: str, *, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user_with_subject(subject))
    return client


def test_rules_and_recipients_are_for_admins_only(alert_rules, access_toml, receiver):
    access_toml(ADMIN_READS)
    alert_rules(RULES.format(url=receiver.url).replace("held-<b>writes</b>", "held-writes"))
    assert client_of(READER).get("/console/alerts/").status_code == 403
    page = client_of(ROOT).get("/console/alerts/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "held-writes" in text and "holding" in text and "would have fired 0 times" in text
    assert "mobkit+http://127.0.0.1" in text


def test_a_rule_id_with_markup_is_refused(alert_rules, receiver):
    with pytest.raises(ImproperlyConfigured, match="id must be"):
        alert_rules(RULES.format(url=receiver.url))


def test_a_test_send_needs_csrf_reaches_the_receiver_and_is_audited(alert_rules, access_toml, receiver):
    access_toml(ADMIN_READS)
    alert_rules(RULES.format(url=receiver.url).replace("held-<b>writes</b>", "held-writes"))
    admin = client_of(ROOT, csrf=True)
    assert admin.post("/console/alerts/test/", {"rule": "held-writes"}).status_code == 403  # no token
    page = admin.get("/console/alerts/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
    response = admin.post("/console/alerts/test/", {"rule": "held-writes", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert [notice["notice"] for notice in receiver.received] == ["test"]
    assert admin.post("/console/alerts/test/", {"rule": "nope", "csrfmiddlewaretoken": token}).status_code == 400
    audit_flush()
    entry = AuditEntry.objects.get(action="alerts.test")
    assert (entry.subject, entry.target) == (ROOT, "held-writes")
    page = admin.get("/console/alerts/").content.decode()
    assert "delivered" in page and ">200<" in page


def test_the_delivery_log_pages_by_keyset_to_its_end(alert_rules, receiver):
    rules = alert_rules(RULES.format(url=receiver.url).replace("held-<b>writes</b>", "held-writes"))
    for _ in range(53):
        deliveries_test(rule=rules.by_id["held-writes"], now=now_ms())
    admin = Client()  # a console admin: no access.toml at all
    admin.force_login(get_user_model().objects.create_superuser("boss", "boss@example.test"))
    seen, url = [], "/console/alerts/"
    for _ in range(5):  # an infinite-loop guard
        text = admin.get(url).content.decode()
        seen += re.findall(r"<tr><td>(\d+)</td>", text)
        found = re.search(r'href="\?before=(\d+)"', text)
        if not found:
            break
        url = f"/console/alerts/?before={found[1]}"
    assert len(seen) == len(set(seen)) == 53
    assert admin.get("/console/alerts/?before=abc").status_code == 400


def test_the_quarantine_page_says_an_alert_fires(alert_rules, access_toml, realm_writer, receiver):
    access_toml(ADMIN_READS + REVIEWS)
    alert_rules(RULES.format(url=receiver.url).replace("held-<b>writes</b>", "held-writes"))
    realm = ScriptedRealm(realm_writer("default"))
    alerts_tick()
    realm.quarantined_write("Held for review")
    realm.follow()
    alerts_tick()
    page = client_of(REVIEWER).get("/console/memory/quarantine/").content.decode()
    assert "Alert firing since" in page and "1 quarantined write in 15m (default)" in page
