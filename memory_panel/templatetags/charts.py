"""Charts drawn on the server as SVG, with their numbers as a table (docs/charts.md §4).

No chart library: a page must read without JavaScript and the CSP forbids inline styles, and
stacked bars and a few lines are a few rectangles and polylines, so the geometry is worked out
here and drawn by ``memory_panel/charts/_chart.html`` with classes from ``charts.css``.
"""

from __future__ import annotations

from dataclasses import dataclass

from django import template

from memory_panel.selectors.charts import Chart
from memory_panel.templatetags.panel_format import human_bytes

register = template.Library()

# The drawing's own units: a slot per day, 100 high. The SVG stretches to its box (CSS), so only
# shapes are drawn in it; every word and number is HTML around it.
SLOT = 10
HEIGHT = 100
# Series colours repeat after this many (``chart-c0`` … in charts.css).
PALETTE = 6


@dataclass(frozen=True)
class Bar:
    x: int
    y: float
    height: float
    colour: int
    label: str


@dataclass(frozen=True)
class Line:
    points: str  # one run of days that have a value; a lone day draws as a dot (round caps)
    colour: int
    dot: bool = False


def _y(value: float, top: float) -> float:
    return round(HEIGHT - value / top * HEIGHT, 2) if top else HEIGHT


def _label(value: int, unit: str) -> str:
    return human_bytes(value) if unit == "bytes" else f"{value:,}"


@register.inclusion_tag("memory_panel/charts/_chart.html")
def chart(chart: Chart) -> dict:
    """One chart: the SVG, its legend, its scale and the table of its numbers."""
    if chart.shape == "bars":
        totals = [sum(s.values[i] for s in chart.series) for i in range(len(chart.days))]
        top = max(totals, default=0)
    else:
        top = max((v for s in chart.series for v in s.values if v is not None), default=0)
    # A threshold far above the values would flatten them: it is drawn only when near the scale.
    threshold_shown = chart.threshold is not None and top >= chart.threshold / 2
    if threshold_shown:
        top = max(top, chart.threshold)
    bars: list[Bar] = []
    lines: list[Line] = []
    if chart.shape == "bars":
        for i, day in enumerate(chart.days):
            base = 0
            for colour, series in enumerate(chart.series):
                value = series.values[i] or 0
                if value:
                    y = _y(base + value, top)
                    bars.append(Bar(i * SLOT + 1, y, round(_y(base, top) - y, 2), colour % PALETTE,
                                    f"{day.isoformat()}: {_label(value, chart.unit)} {series.label}"))
                    base += value
    else:
        for colour, series in enumerate(chart.series):
            lines += [Line(points, colour % PALETTE, dot) for points, dot in _runs(series.values, top)]
    return {
        "chart": chart,
        "width": len(chart.days) * SLOT,
        "height": HEIGHT,
        "bars": bars,
        "lines": lines,
        "legend": [(colour % PALETTE, series) for colour, series in enumerate(chart.series)],
        "top_label": _label(top, chart.unit),
        "threshold_y": _y(chart.threshold, top) if threshold_shown else None,
        "threshold_off_scale": chart.threshold is not None and not threshold_shown,
        "first_day": chart.days[0] if chart.days else None,
        "last_day": chart.days[-1] if chart.days else None,
    }


def _runs(values: list[int | None], top: float) -> list[tuple[str, bool]]:
    """The polylines of a series, each with whether it is a lone day: a day without a value
    (None) breaks the line rather than drawing a zero it does not have."""
    runs: list[list[str]] = [[]]
    for i, value in enumerate(values):
        if value is None:
            runs.append([])
            continue
        runs[-1].append(f"{i * SLOT + SLOT / 2:g},{_y(value, top)}")
    # A lone point is drawn as a segment of no length, which round caps show as a dot.
    return [(" ".join(run if len(run) > 1 else run * 2), len(run) == 1) for run in runs if run]


@register.inclusion_tag("memory_panel/charts/_sparkline.html")
def sparkline(values: list[int] | None, what: str = "records created") -> dict:
    """A small line of daily values, with its total and peak said in words for screen readers."""
    values = values or []
    top = max(values, default=0)
    points = next(iter(_runs(values, top)), ("", False))[0]
    return {"points": points, "width": max(len(values), 1) * SLOT, "height": HEIGHT, "total": sum(values),
            "peak": top, "days": len(values), "what": what}


@register.filter
def chart_value(value: int | None, unit: str) -> str:
    return "—" if value is None else _label(value, unit)


@register.filter
def scope_sparkline(chart_sections: list, scope: object) -> list[int] | None:
    """The daily activity of one Holdings scope, from the page's chart sections (docs/charts.md §1)."""
    for section in chart_sections or ():
        line = section.charts.sparklines.get((scope.realm, scope.scope_kind, scope.scope_key))
        if line is not None:
            return line
    return None


@register.filter
def get_item(mapping: dict, key: object) -> object:
    return (mapping or {}).get(key)
