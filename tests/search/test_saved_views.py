"""Saved views (docs/saved-views.md): kept per user, shared as a link, re-checked for whoever opens one."""

from __future__ import annotations

import pytest
from django.test import Client

from mobkit_console.saved_views.models import SavedView
from tests.support.postures import CALLERS
from tests.support.worlds import QUARANTINED_BODY

pytestmark = pytest.mark.django_db

RECORDS = "/console/memory/records/"


def save(client: Client, name: str, page: str = "memory-records", query: str = "status=quarantined") -> SavedView:
    response = client.post("/console/views/save", {"name": name, "page": page, "query": query})
    assert response.status_code == 302, response.content[:300]
    return SavedView.objects.get(name=name)


def test_a_view_is_saved_listed_opened_and_deleted_by_its_owner(client, world, posture):
    posture("reviewer")
    view = save(client, "Quarantined, latest", query="status=quarantined&cursor=abc&shown=90")
    assert view.query == "status=quarantined"  # paging state is not part of a view
    listing = client.get("/console/views/").content.decode()
    assert "Quarantined, latest" in listing
    opened = client.get(f"/console/views/{view.id}/")
    assert opened.status_code == 302 and opened["Location"] == f"{RECORDS}?status=quarantined"
    assert client.post(f"/console/views/{view.id}/delete").status_code == 302
    assert not SavedView.objects.filter(id=view.id).exists()


def test_saving_needs_the_csrf_token(world, posture, client):
    posture("reviewer")
    user = SavedView._meta.get_field("owner").related_model.objects.get(username=CALLERS["reviewer"][1])
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    response = strict.post("/console/views/save", {"name": "x", "page": "memory-records", "query": ""})
    assert response.status_code == 403
    assert not SavedView.objects.exists()


def test_bad_input_is_a_clear_400(client, world, posture):
    posture("reader")
    for data, words in (
        ({"name": "", "page": "memory-records"}, "needs a name"),
        ({"name": "x", "page": "https://evil.example"}, "unknown page"),
        ({"name": "x" * 81, "page": "memory-records"}, "at most 80"),
    ):
        response = client.post("/console/views/save", data)
        assert response.status_code == 400
        assert words in response.content.decode()


def test_a_shared_view_shows_the_receiver_only_their_own_grants(client, world, posture):
    posture("reader")  # the receiver has signed in once, so the user exists
    posture("reviewer")
    quarantined = [row for row in world.rows.values() if row.status_kind == "quarantined"]
    reviewer_page = client.get(f"{RECORDS}?status=quarantined").content.decode()
    assert quarantined and all(row.id in reviewer_page for row in quarantined)
    view = save(client, "The queue")
    response = client.post(f"/console/views/{view.id}/share", {"username": CALLERS["reader"][1]})
    assert response.status_code == 302
    # The receiver, under the same access.toml, has no review grant.
    posture("reader")
    assert "The queue" in client.get("/console/views/").content.decode()
    opened = client.get(f"/console/views/{view.id}/", follow=True)
    assert opened.status_code == 200
    page = opened.content.decode()
    assert opened.redirect_chain[-1][0] == f"{RECORDS}?status=quarantined"
    for row in quarantined:
        assert row.id not in page and row.title not in page
    assert QUARANTINED_BODY not in page
    # Nor may the receiver change it.
    assert client.post(f"/console/views/{view.id}/delete").status_code == 404
    assert client.post(f"/console/views/{view.id}/share", {"username": CALLERS["reviewer"][1]}).status_code == 404
    assert SavedView.objects.filter(id=view.id).exists()


def test_a_view_not_shared_with_you_is_not_found(client, world, posture):
    posture("reviewer")
    view = save(client, "Mine alone")
    posture("reader")
    assert client.get(f"/console/views/{view.id}/").status_code == 404
    assert "Mine alone" not in client.get("/console/views/").content.decode()


def test_sharing_with_nobody_known_says_so(client, world, posture):
    posture("reviewer")
    view = save(client, "Mine")
    response = client.post(f"/console/views/{view.id}/share", {"username": "ghost@example.test"})
    assert response.status_code == 400
    assert "no user named" in response.content.decode()


def test_each_filtered_page_offers_to_save_itself(client, world, posture):
    posture("admin")
    for url, page in ((f"{RECORDS}?status=active", "memory-records"), ("/console/timeline/", "console-timeline"),
                      ("/console/memory/quarantine/", "memory-quarantine"), ("/console/audit/", "console-audit")):
        html = client.get(url).content.decode()
        assert f'name="page" value="{page}"' in html, url
        assert "csrfmiddlewaretoken" in html, url


def test_a_shared_view_of_a_page_the_receiver_may_not_open_is_refused_there(client, world, posture):
    posture("reader")
    posture("admin")
    view = save(client, "Denials", page="console-audit", query="action=access.denied")
    client.post(f"/console/views/{view.id}/share", {"username": CALLERS["reader"][1]})
    assert client.get(f"/console/views/{view.id}/", follow=True).status_code == 200
    posture("reader")
    opened = client.get(f"/console/views/{view.id}/", follow=True)
    assert opened.redirect_chain[-1][0] == "/console/audit/?action=access.denied"
    assert opened.status_code == 403
