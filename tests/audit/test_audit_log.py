"""The access audit log: each audited action read back through the NDJSON by its readers
(docs/audit-and-oidc.md §1-§3), refused to everyone else, and never holding record text."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from access.config import refresh_access_config
from mobkit_console.accounts.tokens import token_issue, user_for_subject
from mobkit_console.audit.models import AppendOnly, AuditEntry
from mobkit_console.audit.services import audit_entry, audit_flush, audit_prune
from tests.support.audit import AUDIT_NDJSON, AUDIT_PAGE, audit_entries, audit_writes_refused, entries_for
from tests.support.clients import signed_in_client, user_with_subject
from tests.support.postures import AUDITOR, AUDITORS, REVIEWER, ROOT, USER, write_access_toml
from tests.support.rpc import PANEL, call
from tests.support.worlds import QUARANTINED_BODY

pytestmark = pytest.mark.django_db


@pytest.fixture
def auditors(world, posture):
    return posture("auditors")


def _client(subject: str) -> Client:
    return signed_in_client(get_user_model().objects.filter(username=subject).first() or user_with_subject(subject))


def test_a_quarantined_body_read_is_recorded_with_realm_record_and_reader(world, auditors):
    record = world["quarantined"]
    response = _client(REVIEWER).get(f"/console/memory/records/{record.id}/", REMOTE_ADDR="10.1.2.3")
    assert response.status_code == 200 and QUARANTINED_BODY.encode() in response.content

    [entry] = entries_for(audit_entries(_client(ROOT)), "quarantine.body.read")
    assert (entry["subject"], entry["sign_in"], entry["client"]) == (REVIEWER, "session", "10.1.2.3")
    assert (entry["realm"], entry["target"], entry["outcome"]) == ("default", record.id, "ok")


def test_the_quarantine_queue_records_each_body_it_previews(world, auditors):
    assert _client(REVIEWER).get("/console/memory/quarantine/").status_code == 200
    read = {entry["target"] for entry in entries_for(audit_entries(_client(ROOT)), "quarantine.body.read")}
    assert world["quarantined"].id in read


def test_a_search_snippet_of_a_quarantined_body_is_a_recorded_read(world, auditors):
    found = call(_client(REVIEWER), PANEL + "search", {"query": "funds", "status": "quarantined"}).result["records"]
    assert [r["id"] for r in found] == [world["quarantined"].id]
    [entry] = entries_for(audit_entries(_client(ROOT)), "quarantine.body.read")
    assert (entry["subject"], entry["target"]) == (REVIEWER, world["quarantined"].id)


def test_a_denial_is_recorded_with_the_missing_action_on_pages_and_rpc(world, auditors):
    record = world["quarantined"]
    reader = _client(USER)
    assert reader.get(f"/console/memory/records/{record.id}/").status_code == 403
    assert call(reader, PANEL + "record", {"memory_id": record.id}).error["code"] == -32030

    denials = entries_for(audit_entries(_client(ROOT)), "access.denied")
    assert [(d["subject"], d["target"], d["outcome"], d["detail"]) for d in denials] == [
        (USER, record.id, "denied", {"missing": "memory.quarantine.review"})
    ] * 2


def test_an_export_is_recorded_with_its_filters_and_row_count(world, auditors):
    response = _client(USER).get("/console/memory/records.csv", {"scope": "identity", "status": "active"})
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))[1:]
    assert rows

    [entry] = entries_for(audit_entries(_client(ROOT)), "records.export")
    assert entry["outcome"] == "ok"
    assert entry["detail"] == {"format": "csv", "filters": {"scope": "identity", "status": "active"}, "rows": len(rows)}


def test_a_search_is_recorded_with_its_query_on_the_page_and_over_rpc(world, auditors):
    reader = _client(USER)
    assert reader.get("/console/memory/records/", {"q": "green tea"}).status_code == 200
    assert "result" in call(reader, PANEL + "search", {"query": "ridge", "realm": "default"}).body

    searches = entries_for(audit_entries(_client(ROOT)), "records.search")
    assert sorted((s["detail"]["query"], s["detail"]["surface"], s["realm"]) for s in searches) == [
        ("green tea", "page", ""), ("ridge", "rpc", "default"),
    ]


def test_line_and_paragraph_separators_in_an_entry_are_escaped_so_it_stays_one_line(world, auditors):
    # A search is recorded as typed: U+2028/U+2029 would end the line for JavaScript and line readers.
    query = "green\u2028tea\u2029leaf"
    assert _client(USER).get("/console/memory/records/", {"q": query}).status_code == 200
    raw = b"".join(_client(ROOT).get(AUDIT_NDJSON).streaming_content)
    assert "\u2028".encode() not in raw and "\u2029".encode() not in raw
    assert b"green\\u2028tea\\u2029leaf" in raw
    [search] = entries_for(audit_entries(_client(ROOT)), "records.search")  # splitlines splits at both
    assert search["detail"]["query"] == query


def test_sign_ins_and_failed_sign_ins_are_recorded(world, auditors):
    account = user_with_subject(USER)
    account.set_password("a-long-password-1")
    account.save()
    client = Client()
    assert client.post("/console/login/", {"username": USER, "password": "wrong"}).status_code == 200
    assert client.post("/console/login/", {"username": USER, "password": "a-long-password-1"}).status_code == 302

    sign_ins = [s for s in entries_for(audit_entries(_client(ROOT)), "sign_in") if s["subject"] == USER]
    assert [(s["subject"], s["outcome"], s["detail"]) for s in reversed(sign_ins)] == [
        (USER, "failed", {"method": "password"}), (USER, "ok", {"method": "password"}),
    ]


def test_token_creation_and_token_calls_are_recorded(world, auditors):
    token = token_issue(user=user_for_subject("robot@example.test"))
    assert call(Client(), PANEL + "record", {"memory_id": world["quarantined"].id},
                HTTP_AUTHORIZATION=f"Bearer {token}").error["code"] == -32030

    entries = audit_entries(_client(ROOT))
    [created] = entries_for(entries, "token.create")
    assert (created["subject"], created["target"]) == ("robot@example.test", token[:12])
    [denied] = entries_for(entries, "access.denied")
    assert (denied["subject"], denied["sign_in"]) == ("robot@example.test", "token")


def test_an_access_toml_reload_is_recorded_with_the_rule_ids_added_and_removed(world, auditors):
    refresh_access_config()  # the config in force, before the operator's edit
    write_access_toml(auditors, AUDITORS.replace('id = "everyone-reads"', 'id = "all-read"'))
    refresh_access_config()

    [reload] = entries_for(audit_entries(_client(ROOT)), "access.reload")
    assert (reload["subject"], reload["detail"]["added"], reload["detail"]["removed"]) == ("", ["all-read"], ["everyone-reads"])


def test_record_text_never_reaches_the_audit_log(world, auditors):
    reviewer = _client(REVIEWER)
    reviewer.get(f"/console/memory/records/{world['quarantined'].id}/")
    reviewer.get("/console/memory/quarantine/")
    b"".join(reviewer.get("/console/memory/records.ndjson").streaming_content)
    text = b"".join(_client(ROOT).get(AUDIT_NDJSON).streaming_content).decode()
    assert text.count("\n") >= 3
    for written in world.rows.values():
        assert written.body not in text and written.title not in text


@pytest.mark.parametrize("path", [AUDIT_PAGE, AUDIT_NDJSON])
def test_admins_and_access_admin_holders_read_the_log_readers_get_403_anonymous_the_sign_in(world, auditors, path):
    assert _client(ROOT).get(path).status_code == 200
    assert _client(AUDITOR).get(path).status_code == 200
    assert _client(USER).get(path).status_code == 403
    anonymous = Client().get(path)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/console/login/")
    [denied] = entries_for(audit_entries(_client(ROOT)), "access.denied")
    assert (denied["subject"], denied["detail"]) == (USER, {"missing": "access.admin"})


def test_a_django_superuser_reads_the_log_with_access_control_off(world, settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    superuser = user_with_subject("ops@example.test")
    superuser.is_superuser = True
    superuser.save()
    assert signed_in_client(superuser).get(AUDIT_PAGE).status_code == 200
    assert _client(USER).get(AUDIT_PAGE).status_code == 403


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_no_http_method_changes_the_log(world, auditors, method):
    admin = _client(ROOT)
    for path in (AUDIT_PAGE, AUDIT_NDJSON):
        assert getattr(admin, method)(path).status_code == 405


def test_an_entry_cannot_be_changed_or_deleted_only_pruned(world, auditors, settings):
    old, new = audit_entry(action="records.search"), audit_entry(action="records.search")
    old.at -= timedelta(days=91)
    AuditEntry.objects.bulk_create([old, new])
    entry = AuditEntry.objects.get(pk=new.pk)
    with pytest.raises(AppendOnly):
        entry.save()
    with pytest.raises(AppendOnly):
        entry.delete()
    with pytest.raises(AppendOnly):
        AuditEntry.objects.all().delete()
    with pytest.raises(AppendOnly):
        AuditEntry.objects.update(subject="someone else")

    assert audit_prune() == 1
    assert list(AuditEntry.objects.values_list("pk", flat=True)) == [new.pk]
    settings.MOBKIT_AUDIT_RETENTION_DAYS = 0  # keeps everything
    ancient = audit_entry(action="records.search")
    ancient.at -= timedelta(days=3650)
    AuditEntry.objects.bulk_create([ancient])
    assert audit_prune() == 0 and AuditEntry.objects.filter(pk=ancient.pk).exists()


def test_pages_follow_next_to_the_end_and_filters_narrow(world, auditors):
    AuditEntry.objects.bulk_create(
        [audit_entry(action="records.search", realm="default" if n % 2 else "other") for n in range(7)]
    )
    admin = _client(ROOT)
    seen: list[str] = []
    url = AUDIT_PAGE + "?limit=2&realm=default"
    for _ in range(10):  # an infinite-loop guard
        response = admin.get(url)
        seen += [row for row in response.content.decode().split('data-audit-id="')[1:]]
        nxt = response.context["next_url"]
        if nxt is None:
            break
        url = AUDIT_PAGE + nxt
    assert len(seen) == 3
    since = (timezone.now() - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert len(audit_entries(admin, action="records.search", since=since)) == 7
    assert audit_entries(admin, until="2000-01-01") == []


@pytest.mark.parametrize(("query", "paths"), [
    ({"action": "records.delete"}, (AUDIT_PAGE, AUDIT_NDJSON)),
    ({"since": "yesterday"}, (AUDIT_PAGE, AUDIT_NDJSON)),
    ({"until": "2026-13-40"}, (AUDIT_PAGE, AUDIT_NDJSON)),
    ({"subject": "a\x00b"}, (AUDIT_PAGE, AUDIT_NDJSON)),
    ({"realm": "r" * 300}, (AUDIT_PAGE, AUDIT_NDJSON)),
    ({"cursor": "abc"}, (AUDIT_PAGE,)),
    ({"cursor": "0"}, (AUDIT_PAGE,)),
])
def test_bad_filters_are_a_clear_400(world, auditors, query, paths):
    admin = _client(ROOT)
    for path in paths:
        response = admin.get(path, query)
        assert response.status_code == 400
        assert b"Invalid params" in response.content


def test_a_quarantined_body_whose_read_cannot_be_recorded_is_refused_other_reads_go_on(world, auditors):
    reviewer = _client(REVIEWER)
    with audit_writes_refused():
        refused = reviewer.get(f"/console/memory/records/{world['quarantined'].id}/")
        assert refused.status_code == 503 and QUARANTINED_BODY.encode() not in refused.content
        assert reviewer.get("/console/memory/quarantine/").status_code == 503
        over_rpc = call(reviewer, PANEL + "record", {"memory_id": world["quarantined"].id}).error
        assert over_rpc["data"] == {"kind": "audit_unavailable"}

        assert reviewer.get(f"/console/memory/records/{world['tea'].id}/").status_code == 200
        assert reviewer.get("/console/memory/records/", {"q": "tea"}).status_code == 200
        audit_flush()  # the search's entry is lost, and logged: the search itself was answered
    assert entries_for(audit_entries(_client(ROOT)), "quarantine.body.read") == []


def test_the_audit_tab_shows_to_its_readers_alone(world, auditors):
    assert b'href="/console/audit/"' in _client(AUDITOR).get("/console/").content
    assert b'href="/console/audit/"' not in _client(USER).get("/console/").content
