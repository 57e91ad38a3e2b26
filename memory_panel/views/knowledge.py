"""The Knowledge page: one identity's (or mob's) composition, injection budget and history."""

from __future__ import annotations

from functools import partial

from django.http import HttpRequest, HttpResponse

from memory_panel.selectors import knowledge
from memory_panel.selectors.identities import identity_choice, known_identities
from memory_panel.views import as_of
from memory_panel.views.render import panel_view, render_page, section
from memory_panel.views.realm_choice import chosen_realm
from access.caller import Access


def _text_param(request: HttpRequest, name: str) -> str | None:
    value = request.GET.get(name, "").strip()
    return value or None


@panel_view
def knowledge_page(request: HttpRequest, access: Access) -> HttpResponse:
    if (at_ms := as_of.moment_asked(request)) is not None:
        return as_of.knowledge_page(request, access, at_ms)
    realm = chosen_realm(request)
    # docs/search.md §8: the Records page's identity field, suggestions and "luka" shorthand included.
    typed = _text_param(request, "identity")
    identity = identity_choice(access=access, realm=realm, typed=typed)
    lens = section(
        knowledge.knowledge_lens,
        access=access,
        realm=realm,
        identity=identity.identity,
        mob=_text_param(request, "mob"),
    )
    context = {
        "realm": realm,
        "lens": lens,
        "identity": identity,
        "known_identities": partial(known_identities, access=access, realm=realm),  # read if the form renders
        # What was typed, else the identity shown when none was asked for (the first one readable).
        "identity_typed": typed or (lens.data.identity if lens.data else None),
    }
    return render_page(request, "memory_panel/knowledge/page.html", "memory_panel/knowledge/_knowledge.html", context)
