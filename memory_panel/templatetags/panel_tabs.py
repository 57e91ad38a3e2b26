"""Display words of the Holdings verdict tiles and the Knowledge/Pipeline pages."""

from __future__ import annotations

from typing import Any

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


@register.filter
def utility(record: Any) -> dict[str, Any]:
    """docs/panel-tabs.md §3: injected, recalled, useful, ratio, bytes spent and DEAD of one row."""
    usage = getattr(record, "usage", {}) or {}
    injected = int(usage.get("injected_count") or 0)
    useful = int(usage.get("judged_useful_count") or 0)
    return {
        "injected": injected,
        "recalled": int(usage.get("explicit_recall_count") or 0),
        "useful": useful,
        "ratio": f"{useful / injected:.2f}" if injected else "—",
        "spent": injected * int(getattr(record, "body_bytes", 0) or 0),
        "dead": injected >= 3 and useful == 0,
    }
