from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from memory_panel.selectors import realms as selectors_realms
from access.caller import Access
from tests.support.postures import NOTHING_GRANTED
from tests.support.worlds import write_notes

OPEN = Access(subject="ops@example.test", groups=frozenset(), enforced=False, is_admin=False)

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(agent_memory_dir) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("demo", email="demo@example.com"))
    return client


def test_shell_lists_realms_with_counts_and_store_formats(client, agent_memory_dir):
    write_notes(agent_memory_dir, "default", 3)
    write_notes(agent_memory_dir, "team:blue", 1, fmt="older")

    html = client.get("/console/").content.decode()

    assert html.index("default") < html.index("team:blue")
    assert '<td class="num">3</td>' in html and '<td class="num">1</td>' in html
    assert "current (ledger v3)" in html
    assert "older (7 tables)" in html
    assert "/console/memory/records/?realm=team%3Ablue" in html


def test_record_count_is_capped(client, agent_memory_dir, monkeypatch):
    monkeypatch.setattr(selectors_realms, "RECORD_COUNT_CAP", 2)
    write_notes(agent_memory_dir, "default", 3)
    write_notes(agent_memory_dir, "small", 2)

    summaries = {s.name: s for s in selectors_realms.realm_summaries(access=OPEN).realms}
    html = client.get("/console/").content.decode()

    assert (summaries["default"].record_count, summaries["default"].count_capped) == (2, True)
    assert (summaries["small"].record_count, summaries["small"].count_capped) == (2, False)
    assert '<td class="num">2+</td>' in html


def test_count_label_uses_thousands_separators():
    summary = selectors_realms.RealmSummary("r", 10_000, True, "current")
    assert summary.count_label == "10,000+"


def test_no_realms_yet_names_the_directory_it_read(client, agent_memory_dir):
    html = client.get("/console/").content.decode()

    assert "No realms yet" in html
    assert str(agent_memory_dir) in html


def test_missing_agent_memory_directory_is_no_realms_not_an_error(client, settings, tmp_path):
    settings.MOBKIT_AGENT_MEMORY_ROOT = tmp_path / "nowhere"

    response = client.get("/console/")

    assert response.status_code == 200
    assert "No realms yet" in response.content.decode()
    assert not (tmp_path / "nowhere").exists()


def test_unreadable_realm_file_is_reported_not_a_500(client, agent_memory_dir):
    write_notes(agent_memory_dir, "default", 1)
    (agent_memory_dir / "broken.sqlite3").write_bytes(b"this is not a database" * 100)

    response = client.get("/console/")

    html = response.content.decode()
    assert response.status_code == 200
    assert "broken" in html and "unreadable" in html
    assert '<td class="num">1</td>' in html


def test_shell_sets_a_strict_content_security_policy(client):
    policy = client.get("/console/")["Content-Security-Policy"]

    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


def test_htmx_request_gets_the_fragment_alone(client, agent_memory_dir):
    write_notes(agent_memory_dir, "default", 1)

    html = client.get("/console/", HTTP_HX_REQUEST="true").content.decode()

    assert "<html" not in html
    assert "default" in html


def test_memory_tabs_follow_the_callers_access(client, access_toml):
    # No access.toml: everything is readable, so every tab shows.
    html = client.get("/console/").content.decode()
    for tab in ("Holdings", "Records", "Quarantine", "Dreams", "Timeline"):
        assert f">{tab}</a>" in html

    # An enforced access.toml that grants this subject nothing: only Timeline remains.
    access_toml(NOTHING_GRANTED)
    html = client.get("/console/").content.decode()
    assert ">Timeline</a>" in html
    for tab in ("Holdings", "Records", "Quarantine", "Dreams"):
        assert f">{tab}</a>" not in html


def test_realm_counts_are_shown_only_to_realm_wide_readers(client, access_toml, agent_memory_dir):
    write_notes(agent_memory_dir, "default", 3)
    assert "<td class=\"num\">3</td>" in client.get("/console/").content.decode()

    access_toml(NOTHING_GRANTED)
    html = client.get("/console/").content.decode()
    assert "default" in html  # the realm is named, its size is not
    assert "<td class=\"num\">3</td>" not in html


def test_past_a_page_of_realms_the_list_pages_and_finds_by_name(client, agent_memory_dir, monkeypatch):
    monkeypatch.setattr(selectors_realms, "REALMS_PAGE", 3)
    for name in ("alpha", "beta", "delta", "epsilon", "gamma"):
        write_notes(agent_memory_dir, name, 1)

    first = client.get("/console/").content.decode()
    second = client.get("/console/", {"after": "delta"}).content.decode()
    found = client.get("/console/", {"q": "TA"}).content.decode()

    assert [n for n in ("alpha", "beta", "delta", "epsilon", "gamma") if f">{n}</a>" in first] == ["alpha", "beta", "delta"]
    assert "3 of 5 realms" in first and 'href="?after=delta"' in first
    assert [n for n in ("alpha", "beta", "delta", "epsilon", "gamma") if f">{n}</a>" in second] == ["epsilon", "gamma"]
    assert "Next realms" not in second
    assert [n for n in ("alpha", "beta", "delta", "epsilon", "gamma") if f">{n}</a>" in found] == ["beta", "delta"]
    assert "2 of 2 realms whose names hold “TA”" in found


def test_a_few_realms_are_listed_without_a_pager(client, agent_memory_dir):
    write_notes(agent_memory_dir, "default", 1)

    html = client.get("/console/").content.decode()

    assert "Next realms" not in html and 'name="q"' not in html
