"""The Holdings verdict tiles, each decided over every row the caller may read (docs/panel-tiles.md).

MobKit's panel decides LATTICE over at most 2,000 rows, RECALL over the first 50, and never
evaluates ECHO-SAFETY or TAINT WALL (docs/panel-tabs.md §8). The console has the whole store:
the per-record facts come from ``store/tile_facts.py`` (read from the realm index when the realm
has one, so Holdings costs the same at a million records), the rest from the small tables.

A tile the caller cannot evidence says "no grant", never "holding".
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from memory_panel.selectors.holdings import NEAR_FLOOR, ScopeHoldings, realm_holdings
from memory_panel.store.realm_index import realm_index
from memory_panel.store.realm_memo import realm_memo
from memory_panel.store.realms import realm_alias, realm_exists, store_format
from memory_panel.store.records import MemoryRecord
from memory_panel.store.rows import panel_realms, realm_cursor, realm_read, realm_rows, records_by_id
from memory_panel.store.tile_facts import FACTS, fact_rows
from memory_panel.visibility import (
    can_read_memory,
    can_read_realm_history,
    record_visible,
    scope_visible,
    sees_quarantined,
    tile_fact_visible,
    tile_status_counted,
)
from memory_panel.wire.params import FLOOR_RECORDS

if TYPE_CHECKING:
    from access.caller import Access

TILE_IDS = ("echo-safety", "taint-wall", "lattice", "recall", "dreams", "store-floor")
LABELS = {
    "echo-safety": "ECHO-SAFETY",
    "taint-wall": "TAINT WALL",
    "lattice": "LATTICE",
    "recall": "RECALL",
    "dreams": "DREAMS",
    "store-floor": "STORE FLOOR",
}
RECORD_TILES = ("echo-safety", "taint-wall", "lattice", "recall")
EVIDENCE_MAX = 5  # docs/panel-tabs.md §2: VERDICT_EVIDENCE_MAX
WEEK_MS = 7 * 86_400_000  # gated promotion expiry (docs/store-format.md §8)
FACT_TEXT = {
    "lattice.ceiling": "above the trust ceiling",
    "lattice.dangling": "supersede a prior the realm does not hold",
    "recall.leak": "injected while quarantined or after their tombstone",
    "recall.dead": "dead weight (injected ≥ 3, never judged useful)",
    "taint.unreviewed": "active with a quarantine in their history (their own, or a record they derive from),"
                        " their write never reviewed",
    "echo.active": "active echoes of text injected into their authoring session",
    "echo.held": "echoes held back (not active)",
}

# One sentence per tile; docs/panel-tiles.md has the rule in full, with its evidence query.
RULES = {
    "echo-safety": "No record is created from text that was injected into its authoring session: the same"
    " content hash injected into a session the record cites as evidence, before the record was written.",
    "taint-wall": "No record written by a tainted session is active without a review, and no tainted"
    " proposal is committed without one (a committed promotion gate).",
    "lattice": "No LLM-authored record sits above agent_observed (a steward retier to agent_verified needs a"
    " verification claim), nothing ever quarantined rises above it, and every supersede names a prior the realm holds.",
    "recall": "Recall and injection read active rows only; a record injected three times and never judged"
    " useful is dead weight.",
    "dreams": "The newest dream ran clean, and no promotion is still pending past the 7-day expiry a later"
    " dream should have applied.",
    "store-floor": "No scope is at its floor (4,000 active records or 32 MiB of bodies); past 90% of one is a warning.",
}


@dataclass(frozen=True)
class Evidence:
    realm: str
    memory_id: str
    fact: str


@dataclass(frozen=True)
class Tile:
    id: str
    state: str  # holding | degraded | violated | unverifiable | no-grant
    checked: str
    lines: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    evidence_total: int = 0
    needs: str | None = None  # the action a "no grant" tile lacks
    scopes: list[ScopeHoldings] = field(default_factory=list)  # STORE FLOOR's evidence: the scopes at issue

    @property
    def label(self) -> str:
        return LABELS[self.id]


@dataclass
class _RealmFacts:
    """One realm's facts, already limited to what the caller may see."""

    realm: str
    counts: Counter = field(default_factory=Counter)  # fact → records
    samples: dict[str, list[str]] = field(default_factory=dict)  # fact → a few memory ids
    records_checked: int = 0
    scopes: list[ScopeHoldings] = field(default_factory=list)


def verdict_tiles(*, access: Access, realm: str | None) -> list[Tile]:
    """The six tiles, in MobKit's fixed order (docs/panel-tabs.md §2)."""
    if can_read_memory(access):
        # A realm that cannot be read is skipped and named, as on every all-realm page (realm_rows).
        facts, realms = realm_rows(realm, lambda name: [_realm_facts(access, name, EVIDENCE_MAX)])
    else:
        facts, realms = [], [name for name in panel_realms(realm) if realm_exists(name)]
    tiles = {
        "echo-safety": _echo_tile(access, facts, realms),
        "taint-wall": _taint_tile(access, facts, realms),
        "lattice": _fact_tile(access, "lattice", facts),
        "recall": _fact_tile(access, "recall", facts),
        "dreams": _dreams_tile(access, realms),
        "store-floor": _floor_tile(access, facts),
    }
    return [tiles[tile_id] for tile_id in TILE_IDS]


def tile_evidence(*, access: Access, realm: str | None, tile: str, limit: int) -> tuple[list[tuple[str, MemoryRecord]], int]:
    """Up to ``limit`` offending records of one tile (fact, record), and how many there are in all."""
    found: list[tuple[str, MemoryRecord]] = []
    total = 0
    if not can_read_memory(access):
        return found, total
    for name in (n for n in panel_realms(realm) if realm_exists(n)):
        with realm_read(name, alone=realm is not None):
            facts = _realm_facts(access, name, limit)
            for fact, (fact_tile, _) in FACTS.items():
                if fact_tile != tile:
                    continue
                total += facts.counts[fact]
                ids = facts.samples.get(fact, [])[: max(limit - len(found), 0)]
                found += [(fact, r) for r in records_by_id(realm_alias(name), name, ids) if record_visible(access, r)]
    return found, total


# ---------------------------------------------------------------------------------------------
# Reading one realm


def _realm_facts(access: Access, realm: str, sample: int) -> _RealmFacts:
    out = _RealmFacts(realm)
    out.scopes = [s for s in realm_holdings(realm, with_quarantined=sees_quarantined(access)) if scope_visible(access, s.scope_kind, s.scope_key)]
    out.records_checked = sum(
        count
        for s in out.scopes
        for status, count in (
            ("active", s.active), ("superseded", s.superseded), ("tombstoned", s.tombstoned), ("quarantined", s.quarantined)
        )
        if tile_status_counted(access, status)
    )
    index = realm_index(realm)
    if index is not None:
        for fact, kind, key, status, count in index.tile_facts():
            if fact in FACTS and tile_fact_visible(access, kind, key, status):
                out.counts[fact] += count
                room = sample - len(out.samples.setdefault(fact, []))
                if room > 0:
                    out.samples[fact] += index.tile_fact_ids(fact, kind, key, room)
        return out
    for fact, memory_id, kind, key, status in _direct_fact_rows(realm):
        if fact in FACTS and tile_fact_visible(access, kind, key, status):
            out.counts[fact] += 1
            ids = out.samples.setdefault(fact, [])
            if len(ids) < sample:
                ids.append(memory_id)
    return out


def _direct_fact_rows(realm: str) -> list[tuple[str, str, str, str, str]]:
    """The realm's facts read from its file (a realm without an index), kept while the file stands still."""
    return realm_memo(realm, "tile_facts",
                      lambda: sorted(fact_rows(realm_cursor(realm), placeholder="%s"), key=lambda row: row[1]))


def fact_record_ids(*, realm: str, fact: str) -> list[str]:
    """Every record of ``realm`` with ``fact`` (``store/tile_facts.py``), whoever may read it: for
    the console's own alert conditions (docs/alerts.md §2), which name ids, never text."""
    index = realm_index(realm)
    if index is None:
        return [memory_id for name, memory_id, *_ in _direct_fact_rows(realm) if name == fact]
    return [memory_id for name, kind, key, _, count in index.tile_facts() if name == fact
            for memory_id in index.tile_fact_ids(fact, kind, key, count)]


def _evidence(facts: Iterable[_RealmFacts], wanted: Iterable[str]) -> list[Evidence]:
    evidence: list[Evidence] = []
    for fact in wanted:
        for realm_facts in facts:
            evidence += [Evidence(realm_facts.realm, memory_id, fact) for memory_id in realm_facts.samples.get(fact, [])]
    return evidence[:EVIDENCE_MAX]


def _no_records(tile_id: str) -> Tile:
    return Tile(tile_id, "no-grant", "checked nothing", ["records not readable by this principal"], needs="agent.memory.read")


def _checked_records(facts: list[_RealmFacts], realms: list[str]) -> str:
    records = sum(f.records_checked for f in facts)
    where = f" in {len(realms)} realms" if len(realms) > 1 else ""
    return f"checked {records:,} of {records:,} readable records{where}"


def _count_lines(counts: Counter, facts_of_tile: list[str]) -> list[str]:
    return [f"{counts[fact]:,} {FACT_TEXT[fact]}" for fact in facts_of_tile if counts[fact]]


def _state(counts: Counter, facts_of_tile: list[str], extra: Counter | None = None) -> str:
    states = {FACTS[fact][1] for fact in facts_of_tile if counts[fact]} | set(extra or ())
    return "violated" if "violated" in states else "degraded" if "degraded" in states else "holding"


def _tile_facts(tile_id: str) -> list[str]:
    # Violations first, so the evidence shows the worst rows.
    facts = [fact for fact, (tile, _) in FACTS.items() if tile == tile_id]
    return sorted(facts, key=lambda fact: FACTS[fact][1] != "violated")


def _fact_tile(access: Access, tile_id: str, facts: list[_RealmFacts], realms: list[str] | None = None) -> Tile:
    if not can_read_memory(access):
        return _no_records(tile_id)
    counts = sum((f.counts for f in facts), Counter())
    wanted = _tile_facts(tile_id)
    evidence = _evidence(facts, [fact for fact in wanted if counts[fact]])
    lines = _count_lines(counts, wanted) or ["0 of the checked records break the rule"]
    if not sees_quarantined(access):
        lines.append("quarantined and tombstoned rows need memory.quarantine.review")
    return Tile(
        tile_id,
        _state(counts, wanted),
        _checked_records(facts, realms or [f.realm for f in facts]),
        lines,
        evidence,
        sum(counts[fact] for fact in wanted),
    )


def _echo_tile(access: Access, facts: list[_RealmFacts], realms: list[str]) -> Tile:
    tile = _fact_tile(access, "echo-safety", facts, realms)
    if tile.state == "no-grant":
        return tile
    injections = sum(realm_memo(name, "session_injections", lambda: realm_cursor(name).execute(
        "SELECT COUNT(*) FROM injections WHERE session_key IS NOT NULL").fetchone()[0]) for name in realms)
    return Tile(tile.id, tile.state, f"{tile.checked} against {injections:,} session injections",
                tile.lines, tile.evidence, tile.evidence_total)


def _taint_tile(access: Access, facts: list[_RealmFacts], realms: list[str]) -> Tile:
    """Records (a fact) plus proposals: a tainted proposal is committed only through a gate."""
    tile = _fact_tile(access, "taint-wall", facts, realms)
    if tile.state == "no-grant":
        return tile
    checked = 0
    breaches: Counter = Counter()
    reviewer = sees_quarantined(access)
    for name in realms:
        clock, rows = realm_memo(name, "tainted_proposals", partial(_tainted_proposals, name))
        for kind, key, status, created, gated in rows:
            if not scope_visible(access, kind, key):
                continue
            checked += 1
            if status == "accepted" and not gated:
                breaches["violated"] += 1
            elif status in ("pending", "held") and clock - created > WEEK_MS:
                breaches["degraded"] += 1
        if reviewer:
            waiting = realm_memo(name, "quarantined_a_week", partial(_quarantined_before, name, clock - WEEK_MS))
            breaches["stale"] += sum(n for kind, key, n in waiting if scope_visible(access, kind, key))
    lines = [line for line in tile.lines if not line.startswith("0 of")]
    if breaches["violated"]:
        lines.append(f"{breaches['violated']:,} tainted proposals committed without a gate")
    if breaches["degraded"]:
        lines.append(f"{breaches['degraded']:,} tainted proposals waiting over 7 days")
    if breaches["stale"]:
        lines.append(f"{breaches['stale']:,} quarantined records waiting over 7 days for review")
    state = tile.state
    if breaches["violated"]:
        state = "violated"
    elif state == "holding" and (breaches["degraded"] or breaches["stale"]):
        state = "degraded"
    return Tile(tile.id, state, f"{tile.checked} · {checked:,} tainted proposals",
                lines or ["0 of the checked records and proposals break the rule"], tile.evidence, tile.evidence_total)


def _tainted_proposals(name: str) -> tuple[int, list[tuple]]:
    """The realm's clock, and each tainted proposal's scope, status, time and whether a gate committed it."""
    cursor = realm_cursor(name)
    return _realm_clock(cursor), cursor.execute(
        "SELECT p.scope_kind, p.scope_key, p.status, p.created_at_ms,"
        " EXISTS (SELECT 1 FROM pending_promotions g WHERE g.record_id = p.proposal_id AND g.status = 'committed')"
        " FROM proposals p WHERE p.taint IS NOT NULL"
    ).fetchall()


def _quarantined_before(name: str, cutoff_ms: int) -> list[tuple[str, str, int]]:
    """(scope_kind, scope_key, records) quarantined before ``cutoff_ms``."""
    index = realm_index(name)  # the realm has no (status, created) index of its own
    if index is not None:
        return index.quarantined_before(cutoff_ms)
    return realm_cursor(name).execute(
        "SELECT scope_kind, scope_key, COUNT(*) FROM records WHERE status_kind = 'quarantined'"
        " AND created_at_ms < %s GROUP BY 1, 2",
        [cutoff_ms],
    ).fetchall()


def _realm_clock(cursor) -> int:
    """The realm's own now: its newest audit row. Ages are measured on the store's clock, not ours."""
    row = cursor.execute("SELECT applied_at_ms FROM audit ORDER BY audit_id DESC LIMIT 1").fetchone()
    return row[0] if row else 0


def _dreams_tile(access: Access, realms: list[str]) -> Tile:
    if not can_read_realm_history(access):
        return Tile("dreams", "no-grant", "checked nothing", ["dream history not readable by this principal"],
                    needs="agent.memory.read")
    runs = 0
    last: tuple[int, str, str] | None = None  # (completed_at_ms, realm, detail)
    overdue = 0
    for name in realms:
        sheets = realm_memo(name, "dream_sheets", partial(_dream_sheets, name))
        if not sheets:
            continue
        count, newest, detail, expired = sheets
        runs += count
        if last is None or newest > last[0]:
            last = (newest, name, detail)
        overdue += sum(1 for kind, key in expired if scope_visible(access, kind, key))
    if last is None:
        return Tile("dreams", "unverifiable", "checked 0 dream runs", ["no dream runs in the durable sheets yet"])
    verdicts, skips = _sheet(last[2])
    lines = [f"newest run in realm {last[1]}"]
    state = "holding"
    if overdue:
        state = "violated"
        lines.append(f"{overdue:,} promotions left pending past their 7-day expiry")
    blocked = verdicts.get("quarantine_release_blocked", 0)
    if blocked or skips:
        state = "degraded" if state == "holding" else state
        if blocked:
            lines.append(f"newest run blocked {blocked} quarantine release{'s' if blocked != 1 else ''}")
        if skips:
            lines.append(f"newest run skipped {len(skips)} step{'s' if len(skips) != 1 else ''}")
    if state == "holding":
        lines.append("newest run clean; no promotion past expiry")
    return Tile("dreams", state, f"checked {runs:,} dream runs", lines)


def _dream_sheets(name: str) -> tuple[int, int, str, list[tuple[str, str]]] | tuple[()]:
    """The realm's dream runs: how many, the newest's end and sheet, and the scopes of promotions left
    pending past their expiry by then; empty when it has no run."""
    if not store_format(name).has("dream_runs"):
        return ()
    cursor = realm_cursor(name)
    count, newest = cursor.execute("SELECT COUNT(*), MAX(completed_at_ms) FROM dream_runs").fetchone()
    if not count:
        return ()
    detail = cursor.execute(
        "SELECT detail FROM dream_runs ORDER BY completed_at_ms DESC, run_id DESC LIMIT 1").fetchone()[0]
    # docs/store-format.md §7.3: the next dream expires promotions unresolved for 7 days.
    expired = cursor.execute(
        "SELECT scope_kind, scope_key FROM pending_promotions WHERE status = 'pending' AND created_at_ms + %s < %s",
        [WEEK_MS, newest],
    ).fetchall()
    return count, newest, detail, expired


def _sheet(detail: str) -> tuple[dict, list]:
    try:
        parsed = json.loads(detail)
    except (TypeError, ValueError):
        return {}, []
    if not isinstance(parsed, dict):
        return {}, []
    verdicts = parsed.get("verdicts") if isinstance(parsed.get("verdicts"), dict) else {}
    skips = parsed.get("skips") if isinstance(parsed.get("skips"), list) else []
    return {k: v for k, v in verdicts.items() if isinstance(v, int)}, skips


def _floor_tile(access: Access, facts: list[_RealmFacts]) -> Tile:
    scopes = [scope for f in facts for scope in f.scopes]
    if not can_read_memory(access) or (not scopes and access.enforced):
        return Tile("store-floor", "no-grant", "checked nothing", ["no scope readable by this principal"],
                    needs="agent.memory.read")
    at_floor = [s for s in scopes if s.floor_pressure]
    near = [s for s in scopes if not s.floor_pressure and s.floor_fraction >= NEAR_FLOOR]
    floors = f"floors {FLOOR_RECORDS:,} records / 32 MiB per scope"
    if at_floor:
        return Tile("store-floor", "violated", f"checked {len(scopes):,} scopes",
                    [f"{len(at_floor)} scope{'s' if len(at_floor) != 1 else ''} at the floor", floors],
                    scopes=at_floor[:EVIDENCE_MAX])
    if near:
        return Tile("store-floor", "degraded", f"checked {len(scopes):,} scopes",
                    [f"{len(near)} scope{'s' if len(near) != 1 else ''} past 90% of a floor", floors],
                    scopes=near[:EVIDENCE_MAX])
    return Tile("store-floor", "holding", f"checked {len(scopes):,} scopes", ["no scope near its floor", floors])
