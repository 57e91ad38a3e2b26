"""One scripted history for the history tests, written through the store writer at known moments (docs/history.md §3):
create, supersede, a quarantined write, its release by an operator, a tombstone."""

from __future__ import annotations

import datetime
import html
import re
from dataclasses import dataclass
from pathlib import Path

from memory_panel.simulator.store_writer import (
    ManualClock,
    StoreWriter,
    agent,
    batch,
    create_op,
    identity_scope,
    new_record,
)

REALM = "default"
LUKA = "identity:luka"
TAINT = "session tainted by web tool 'web_fetch'"
START = datetime.datetime(2026, 11, 2, 9, 0, tzinfo=datetime.UTC)
HOUR_MS = 3_600_000


def iso_ms(at_ms: int) -> str:
    """As the timeline's links write a moment: to the millisecond, in UTC."""
    moment = datetime.datetime.fromtimestamp(at_ms / 1000, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso(at_ms: int) -> str:
    return datetime.datetime.fromtimestamp(at_ms / 1000, tz=datetime.UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Script:
    """The records and the moment (epoch ms) each step was written; ``between(step)`` is a moment
    after that step and before the next."""

    route_v1: str
    route_v2: str
    rumour: str
    released: str
    steps: dict[str, int]

    def between(self, step: str) -> str:
        return iso(self.steps[step] + HOUR_MS // 2)

    def before(self) -> str:
        return iso(self.steps["create"] - HOUR_MS)


def write_script(agent_memory_dir: Path) -> Script:
    clock = ManualClock(int(START.timestamp() * 1000))
    steps: dict[str, int] = {}
    luka = identity_scope(REALM, LUKA)
    with StoreWriter.create(REALM, root=agent_memory_dir, clock=clock) as writer:
        steps["create"] = clock()
        route_v1 = writer.remember(luka, "Route to the summit", "Take the north ridge first, then the saddle.")
        steps["supersede"] = clock.advance(HOUR_MS)
        route_v2 = writer.supersede(route_v1, "Route to the summit", "Take the south ridge first, then the saddle.")
        steps["quarantine"] = clock.advance(HOUR_MS)
        record = new_record(kind="fact", title="Summit closed on Friday", body="Read on a forum page.")
        rumour = writer.apply_batch(batch(realm=REALM, author=agent(LUKA), ops=[create_op(luka, record)]),
                                    gate_reason=TAINT).memory_ids[0]
        steps["release"] = clock.advance(HOUR_MS)
        released = writer.review_quarantine(rumour, "release", reviewer={"kind": "operator", "principal": "maria@example.com"}).successor
        steps["tombstone"] = clock.advance(HOUR_MS)
        writer.forget(route_v2)
    return Script(route_v1, route_v2, rumour, released, steps)


# ---- reading the as-of pages -------------------------------------------------------------------

_ROW = re.compile(r'<tr data-memory-id="([^"]*)" data-status="([^"]*)">')
_STATUS = re.compile(r'id="as-of-status" data-status="([^"]*)"')
_STEP = re.compile(r'<li data-memory-id="([^"]*)"( aria-current="step")?>')
_BLOCK = r'id="{}".*?</(?:ol|ul|table)>'


def row_statuses(page: str) -> dict[str, str]:
    """The Records rows of an as-of page: memory id → status then."""
    return {html.unescape(memory_id): status for memory_id, status in _ROW.findall(page)}


def status_then(page: str) -> str | None:
    found = _STATUS.search(page)
    return found.group(1) if found else None


def block_ids(page: str, block: str) -> list[str]:
    """The data-memory-id of each item in the list with id ``block``."""
    found = re.search(_BLOCK.format(block), page, re.S)
    return [html.unescape(memory_id) for memory_id, _ in _STEP.findall(found.group(0))] if found else []


def current_step(page: str) -> str | None:
    return next((html.unescape(memory_id) for memory_id, current in _STEP.findall(page) if current), None)


def holdings_cells(page: str, realm: str, scope_kind: str, scope_key: str) -> list[str]:
    found = re.search(rf'<tr data-scope="{re.escape(html.escape(f"{realm}|{scope_kind}|{scope_key}"))}">(.*?)</tr>',
                      page, re.S)
    return re.findall(r"<td>([^<]*)</td>", found.group(1)) if found else []
