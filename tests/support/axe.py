"""axe-core in the browser tests: injected from the installed ``axe-playwright-python`` package.

The package ships axe-core's ``axe.min.js`` (MPL-2.0, Deque Systems); nothing is fetched at test
time. Evaluated through the DevTools protocol, so the console's CSP (no inline scripts) does not
stand in its way.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page

BLOCKING_IMPACTS = ("serious", "critical")

_RUN = """async impacts => {
    const result = await axe.run(document, {resultTypes: ["violations"]});
    return result.violations.filter(v => impacts.includes(v.impact)).map(v => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => n.target.join(" ") + " — " + (n.failureSummary || "").replace(/\\s+/g, " ")),
    }));
}"""


@cache
def axe_source() -> str:
    return files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")


def axe_violations(page: Page, impacts: tuple[str, ...] = BLOCKING_IMPACTS) -> list[str]:
    """The page's axe-core violations of these impacts, one readable line per rule and node."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    return [f"{v['impact']} {v['id']} ({v['help']}): {node}"
            for v in page.evaluate(_RUN, list(impacts)) for node in v["nodes"]]
