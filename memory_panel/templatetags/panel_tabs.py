"""Display words of the Holdings verdict tiles and the Knowledge/Pipeline pages."""

from __future__ import annotations

from django import template

from memory_panel.selectors.tiles import FACT_TEXT

register = template.Library()

# docs/panel-tabs.md C5: the status words.
TILE_WORDS = {
    "holding": "HOLDING",
    "degraded": "DEGRADED",
    "violated": "VIOLATED",
    "unverifiable": "UNVERIFIABLE",
    "no-grant": "NO GRANT",
}


@register.filter
def tile_word(state: str) -> str:
    return TILE_WORDS.get(state, str(state).upper())


@register.filter
def fact_text(fact: str) -> str:
    return FACT_TEXT.get(fact, fact)


@register.simple_tag
def proposal_taint(taints: dict, realm: str, proposal_id: str) -> str:
    """The propose-time taint reason of one waiting proposal (keys are (realm, proposal_id) pairs)."""
    return taints.get((realm, proposal_id), "")
