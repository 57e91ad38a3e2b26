"""The access explainer (docs/access.md §2.9): who may open it, its bad-input answers, and its page."""

from __future__ import annotations

import pytest

from access.config import refresh_access_config
from mobkit_console.audit.models import AuditEntry
from mobkit_console.audit.services import audit_flush
from tests.support.postures import AUDITOR, AUDITORS, IDP_GROUP_GATES, READER, REVIEWER, ROOT, SCOUT, USER

pytestmark = pytest.mark.django_db

PAGE = "/console/access/"
EXPLAIN = "/console/access/explain.json"


# (access.toml, subject, console admin, may open)
OPENERS = [
    (AUDITORS, ROOT, False, True),
    (AUDITORS, AUDITOR, False, True),
    (AUDITORS, READER, True, True),
    (None, USER, True, True),
    (AUDITORS, REVIEWER, False, False),
    (AUDITORS, READER, False, False),
    (None, USER, False, False),
]


@pytest.mark.parametrize(("text", "subject", "superuser", "may"), OPENERS)
def test_only_access_readers_open_it_and_others_are_audited(client, world, as_caller, text, subject, superuser, may):
    as_caller(text, subject, superuser=superuser)
    page = client.get(PAGE)
    answer = client.get(EXPLAIN, {"subject": READER, "action": "agent.view"})
    nav = client.get("/console/")
    assert (page.status_code, answer.status_code) == ((200, 200) if may else (403, 403))
    assert (b'href="/console/access/"' in nav.content) is may
    audit_flush()
    denials = AuditEntry.objects.filter(action="access.denied", subject=subject, detail__missing="access.admin").count()
    assert denials == (0 if may else 2)
    if not may:
        assert answer.json() == {"error": "access_denied", "message": "access denied: access.admin"}


def test_signed_out_callers_get_401_json_and_the_page_sends_them_to_sign_in(client, world):
    assert client.get(EXPLAIN, {"subject": READER, "action": "agent.view"}).status_code == 401
    assert client.get(PAGE).status_code == 302


# (query, field, message)
BAD = [
    ({"action": "agent.view"}, "subject", "subject is required"),
    ({"subject": " ", "action": "agent.view"}, "subject", "subject is required"),
    ({"subject": "a\x00b", "action": "agent.view"}, "subject", "subject must be printable text of at most 254 characters"),
    ({"subject": "x" * 255, "action": "agent.view"}, "subject", "subject must be printable text of at most 254 characters"),
    ({"subject": READER}, "action", "action is required"),
    ({"subject": READER, "action": "agent.*"}, "action", "action must be one of the 24 actions, not 'agent.*'"),
    ({"subject": READER, "action": "agent.view", "identity": SCOUT, "memory_id": "m"}, "memory_id",
     "memory_id cannot be asked together with identity: explain one resource at a time"),
    ({"subject": READER, "action": "agent.view", "mob": "m", "operator": "o"}, "operator",
     "operator cannot be asked together with mob: explain one resource at a time"),
    ({"subject": READER, "action": "agent.view", "identity": SCOUT, "realm": "default"}, "realm",
     "realm goes with memory_id (a record in that realm) or alone, not with identity"),
    ({"subject": READER, "action": "agent.view", "realm": "nowhere"}, "realm", "realm names no realm: 'nowhere'"),
    ({"subject": READER, "action": "agent.send", "memory_id": "m"}, "action",
     "action with memory_id must be one that reads a record (agent.memory.read, mob.memory.read, "
     "operator.memory.read, memory.quarantine.review)"),
    ({"subject": READER, "action": "agent.view", "groups": ",".join(f"g{i}" for i in range(51))}, "groups",
     "groups must be at most 50 comma-separated printable names"),
]


@pytest.mark.parametrize(("query", "field", "message"), BAD)
def test_bad_params_are_400_json_naming_the_field(client, world, as_caller, query, field, message):
    as_caller(AUDITORS, ROOT)
    response = client.get(EXPLAIN, query)
    assert response.status_code == 400
    assert response.json() == {"error": "invalid_params", "message": f"Invalid params: {message}", "field": field}
    page = client.get(PAGE, query)
    assert page.status_code == 400 and "Invalid params" in page.content.decode()


def test_an_unknown_record_is_404_json(client, world, as_caller):
    as_caller(AUDITORS, ROOT)
    response = client.get(EXPLAIN, {"subject": READER, "action": "agent.memory.read", "memory_id": "no-such"})
    assert (response.status_code, response.json()["error"]) == (404, "not_found")


# (query, allowed, decisive, matched, summary)
ANSWERS = [
    ({"subject": "carol@example.test", "action": "agent.memory.read", "identity": "identity:ana"},
     True, ["carol-reads-all"], ["carol-reads-all"],
     "Allowed: carol@example.test may agent.memory.read on identity:ana, by rule carol-reads-all."),
    # A group only an identity provider vouches for: the deny overrides the subject's allow.
    ({"subject": "carol@example.test", "groups": "denied-ana", "action": "agent.memory.read", "identity": "identity:ana"},
     False, ["no-ana-for-denied-ana"], ["carol-reads-all", "no-ana-for-denied-ana"],
     "Denied: carol@example.test may not agent.memory.read on identity:ana (needs agent.memory.read on "
     "identity:ana: denied by rule no-ana-for-denied-ana)."),
    ({"subject": "never@example.test", "action": "agent.memory.read", "identity": "identity:ana"},
     False, [], [],
     "Denied: never@example.test may not agent.memory.read on identity:ana (needs agent.memory.read on "
     "identity:ana: no rule allows agent.memory.read)."),
    ({"subject": "dan@example.test", "groups": "ana-readers, unknown-group", "action": "agent.memory.read",
      "identity": "identity:ana"}, True, ["ana-readers-read-ana"], ["ana-readers-read-ana"],
     "Allowed: dan@example.test may agent.memory.read on identity:ana, by rule ana-readers-read-ana."),
    ({"subject": ROOT, "action": "operator.memory.read", "operator": "ops"}, True, [], [],
     f"Allowed: {ROOT} may operator.memory.read on operator scope ops, {ROOT} is an admin."),
]


@pytest.mark.parametrize(("query", "allowed", "decisive", "matched", "summary"), ANSWERS)
def test_answers(client, world, as_caller, query, allowed, decisive, matched, summary):
    as_caller(IDP_GROUP_GATES, ROOT)
    assert client.get(EXPLAIN, query).json() == {"allowed": allowed, "decisive": decisive, "matched": matched,
                                                 "summary": summary}


def test_the_page_explains_maps_lists_rules_and_links_denials(client, world, as_caller):
    as_caller(AUDITORS, READER)
    client.get(f"/console/memory/records/{world['quarantined'].id}/")  # a reader is denied a quarantined record
    as_caller(AUDITORS, ROOT)
    page = client.get(PAGE, {"subject": READER, "action": "agent.memory.read", "identity": SCOUT}).content.decode()
    assert "data-explain-summary" in page and "Allowed: reader@example.test" in page
    assert 'data-rule-id="reviewers-review"' in page and "reviewer@example.test (group reviewers)" in page
    assert "Records, Knowledge" in page and "mobkit/access/get" not in page.split("JSON-RPC methods listed")[1][:2000]
    assert f"memory_id={world['quarantined'].id}" in page


def test_the_page_says_why_each_rule_did_or_did_not_count(client, world, as_caller):
    as_caller(IDP_GROUP_GATES, ROOT)
    page = client.get(PAGE, {"subject": "carol@example.test", "groups": "denied-ana", "action": "agent.memory.read",
                             "identity": "identity:ana"}).content.decode()
    first_check = page.split("<caption>")[1].split("</table>")[0]  # agent.memory.read on identity:ana
    rows = {row.split("</td>")[0]: row for row in first_check.split('<tr><td class="mono">')[1:]}
    assert "matched, overridden by a deny" in rows["carol-reads-all"]
    assert "matched, decisive" in rows["no-ana-for-denied-ana"]
    assert "its subjects and groups do not include this subject" in rows["ana-readers-read-ana"]
    # Reading an identity's memory needs agent.view on it too: a second check, allowed by carol's rule.
    assert "<span class=\"mono\">agent.view</span> on <span class=\"mono\">identity:ana</span>: allowed" in page


def test_the_rules_show_what_the_last_reload_changed(client, world, as_caller, access_toml):
    as_caller(AUDITORS, ROOT)
    refresh_access_config()  # the config in force, before the operator's edit
    access_toml(AUDITORS.replace('id = "auditor-administers"', 'id = "auditor-admin"') + """
[[rules]]
id = "late-addition"
actions = ["mob.observe"]
""")
    refresh_access_config()
    page = client.get(PAGE).content.decode()
    assert "added auditor-admin, late-addition; removed auditor-administers; changed none." in page
    assert 'data-rule-id="late-addition"' in page and "everyone, anonymous callers included" in page
