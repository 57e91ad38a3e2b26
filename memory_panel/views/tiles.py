"""A verdict tile's evidence: every offending record the caller may read (docs/panel-tiles.md)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from memory_panel.errors import NotFound
from memory_panel.selectors import taint_wall
from memory_panel.selectors import tiles as tile_selectors
from memory_panel.views.render import panel_view, render_page
from memory_panel.views.realm_choice import chosen_realm
from access.caller import Access

# The evidence page lists this many records; the count above it is the full number.
EVIDENCE_PAGE = 200
# TAINT WALL's page tells the story of this many of its records (a few statements each).
STORIES_SHOWN = 20


@panel_view
def tile_evidence(request: HttpRequest, access: Access, tile: str) -> HttpResponse:
    if tile not in tile_selectors.TILE_IDS:
        raise NotFound(f"unknown verdict tile '{tile}' (expected one of {', '.join(tile_selectors.TILE_IDS)})")
    realm = chosen_realm(request)
    found = {t.id: t for t in tile_selectors.verdict_tiles(access=access, realm=realm)}[tile]
    rows, total = tile_selectors.tile_evidence(access=access, realm=realm, tile=tile, limit=EVIDENCE_PAGE)
    unreviewed = [(record.realm, record.id) for fact, record in rows if fact == taint_wall.UNREVIEWED]
    context = {
        "realm": realm,
        "tile": found,
        "label": found.label,
        "rule": tile_selectors.RULES[tile],
        "rows": rows,
        "total": total,
        "stories": taint_wall.taint_stories(access=access, refs=unreviewed[:STORIES_SHOWN]),
    }
    return render_page(request, "memory_panel/tiles/evidence.html", "memory_panel/tiles/_evidence.html", context)
