"""Saving, sharing and deleting saved views; every change is the owner's alone (docs/saved-views.md §1)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.http import QueryDict

from memory_panel.errors import InvalidParams, NotFound
from mobkit_console.saved_views.models import NAME_MAX, PAGES, QUERY_MAX, SavedView

# Where a page was in its list, not what it shows: a saved view opens at the top.
DROPPED_PARAMS = ("cursor", "shown", "csrfmiddlewaretoken")


def view_query(raw: str) -> str:
    """A page's query string as a view keeps it: parsed, without paging state, encoded again."""
    query = QueryDict(raw, mutable=True)
    for name in DROPPED_PARAMS:
        query.pop(name, None)
    encoded = query.urlencode()
    if len(encoded) > QUERY_MAX:
        raise InvalidParams(f"the view's filters are longer than {QUERY_MAX} characters")
    return encoded


def save_view(*, owner, name: str, page: str, query: str) -> SavedView:
    """Save (or, under a name the owner already uses, replace) a view of ``page`` filtered by ``query``."""
    name = " ".join(name.split())
    if not name:
        raise InvalidParams("a saved view needs a name")
    if len(name) > NAME_MAX:
        raise InvalidParams(f"a saved view's name is at most {NAME_MAX} characters")
    if page not in PAGES:
        raise InvalidParams(f"unknown page '{page[:40]}' (expected one of {', '.join(sorted(PAGES))})")
    view, _ = SavedView.objects.update_or_create(
        owner=owner, name=name, defaults={"page": page, "query": view_query(query)}
    )
    return view


def own_view(*, owner, view_id: int) -> SavedView:
    try:
        return SavedView.objects.get(id=view_id, owner=owner)
    except SavedView.DoesNotExist:
        raise NotFound(f"no saved view {view_id} of yours") from None


def delete_view(*, owner, view_id: int) -> None:
    own_view(owner=owner, view_id=view_id).delete()


def share_view(*, owner, view_id: int, username: str) -> SavedView:
    """Let another user open the view; what they see is still only what their own grants allow."""
    view = own_view(owner=owner, view_id=view_id)
    receiver = get_user_model().objects.filter(username=username.strip()).first()
    if receiver is None:
        raise InvalidParams(f"no user named '{username.strip()[:80]}'")
    if receiver != owner:
        view.shared_with.add(receiver)
    return view


def unshare_view(*, owner, view_id: int, username: str) -> None:
    view = own_view(owner=owner, view_id=view_id)
    view.shared_with.remove(*get_user_model().objects.filter(username=username))
