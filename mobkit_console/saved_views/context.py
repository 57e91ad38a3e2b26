"""The "Save this view" form's context, for every page that includes it (docs/saved-views.md §1).

A context processor rather than a template tag: the memory panel's templates stay free of the
console's apps (they include the form only when ``save_view`` is there), and an htmx fragment of a
filtered list gets the query of that very request, so the form saves what is on screen.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from memory_panel.errors import InvalidParams
from mobkit_console.saved_views.services import view_query


def save_view_form(request: HttpRequest) -> dict[str, Any]:
    if not request.user.is_authenticated:
        return {}
    try:
        query = view_query(request.GET.urlencode())
    except InvalidParams:
        return {}  # filters too long to keep: the page shows no form to save them
    return {"save_view": {"template": "saved_views/_save_form.html", "query": query}}
