"""Which saved views a user may list and open (docs/saved-views.md §2)."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.urls import reverse

from memory_panel.errors import NotFound
from mobkit_console.saved_views.models import SavedView


def views_of(user) -> QuerySet[SavedView]:
    return SavedView.objects.filter(owner=user).prefetch_related("shared_with")


def views_shared_with(user) -> QuerySet[SavedView]:
    return SavedView.objects.filter(shared_with=user).select_related("owner")


def openable_view(*, user, view_id: int) -> SavedView:
    """The view, if ``user`` owns it or it was shared with them; any other id is "not found"."""
    view = SavedView.objects.filter(Q(owner=user) | Q(shared_with=user), id=view_id).distinct().first()
    if view is None:
        raise NotFound(f"no saved view {view_id} for you")
    return view


def view_url(view: SavedView) -> str:
    """The page's URL with the saved filters: only a link, evaluated for whoever follows it."""
    return reverse(view.page) + (f"?{view.query}" if view.query else "")
