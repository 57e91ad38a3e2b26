"""The charts a page shows beside its lists (docs/charts.md §1): each page names its sections."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.http import HttpRequest

from memory_panel.selectors.charts import WINDOWS, ChartSet, parse_window

if TYPE_CHECKING:
    from access.caller import Access


@dataclass(frozen=True)
class ChartSection:
    id: str
    heading: str
    charts: ChartSet


def chart_sections(
    request: HttpRequest, access: Access, realm: str | None,
    sections: list[tuple[str, str, Callable[..., ChartSet | None]]],
) -> dict[str, Any]:
    """``sections``: (anchor id, heading, selector) in page order; a selector answering None (the
    caller may not see those counts) leaves its section out."""
    days = parse_window(request.GET.get("days"))
    shown = []
    for anchor, heading, selector in sections:
        charts = selector(access=access, realm=realm, days=days)
        if charts is not None:
            shown.append(ChartSection(anchor, heading, charts))
    return {"chart_sections": shown, "chart_windows": WINDOWS}
