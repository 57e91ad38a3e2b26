"""Why TAINT WALL is red: the story of each record that breaks it (docs/panel-tiles.md §3.1).

A record breaks the wall (``taint.unreviewed``) when it is active, carries ``ever_quarantined``,
and no review wrote it. The flag comes from the record's own quarantine or, far more often, from a
direct ancestor — the record it supersedes or one it derives from — that was quarantined
(docs/store-format.md §7.2): an agent that builds on a note an operator released inherits the
note's quarantine history, and its own write is no review. The story names those ancestors, says
how each came by its flag, and says when the realm is one ``seed_demo`` wrote (docs/demo.md §2), so
a newcomer knows the demo's violation is the demo's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_panel.store.realms import DEMO_LEDGER_DOMAIN, realm_alias, store_format
from memory_panel.store.records import MemoryRecord
from memory_panel.store.rows import realm_cursor, realm_read, records_by_id
from memory_panel.visibility import record_visible
from memory_panel.wording import author_words

if TYPE_CHECKING:
    from access.caller import Access
    from memory_panel.selectors.tiles import Tile

UNREVIEWED = "taint.unreviewed"  # the fact (memory_panel/store/tile_facts.py) whose records have a story


@dataclass(frozen=True)
class TaintedAncestor:
    """A direct ancestor with a quarantine in its history, as far as the caller may read it."""

    memory_id: str
    relation: str  # "supersedes" | "derives from": how the broken record names it
    title: str | None  # None: the caller may not read the ancestor, so nothing more is said
    status: str | None
    quarantine_reason: str | None  # the write gate's reason, its own or its released origin's
    released_by: str | None  # who released it from quarantine ("operator", "steward")
    released_at_ms: int | None

    @property
    def releaser(self) -> str | None:
        """Who released it, as a sentence names them."""
        return {"operator": "an operator", "steward": "the steward"}.get(self.released_by or "", self.released_by)

    @property
    def how(self) -> str:
        """How the ancestor came by its quarantine history, in a few words."""
        if self.title is None or not (self.status == "quarantined" or self.released_by):
            return "with a quarantine in its history"
        if self.status == "quarantined":
            return "still in quarantine"
        return f"released from quarantine by {self.releaser}"


@dataclass(frozen=True)
class TaintStory:
    realm: str
    record: MemoryRecord
    written_by: str  # author words of the record's own write
    written_at_ms: int | None  # when its create or supersede was applied (its audit row)
    ancestors: tuple[TaintedAncestor, ...]
    seeded_by_demo: bool  # the realm file carries seed_demo's marker

    @property
    def why(self) -> str:
        """One line: why this record breaks the wall."""
        first = self.ancestors[0] if self.ancestors else None
        source = f"{first.relation} a record {first.how}" if first else "carries a quarantine in its history"
        return f"“{self.record.title}” {source}, and its own write had no review"


def taint_stories(*, access: Access, refs: list[tuple[str, str]]) -> list[TaintStory]:
    """The story of each record ``refs`` names as (realm, memory_id), in that order; records the
    caller may not read, or that are gone, have none."""
    stories = []
    for realm in dict.fromkeys(name for name, _ in refs):
        with realm_read(realm, alone=False):  # a realm failing now drops its stories, not the page
            demo = _seeded_by_demo(realm)
            wanted = [memory_id for name, memory_id in refs if name == realm]
            for record in records_by_id(realm_alias(realm), realm, wanted):
                if not record_visible(access, record):
                    continue
                written_at, _ = _own_write(realm, record.id)
                stories.append(
                    TaintStory(
                        realm=realm,
                        record=record,
                        written_by=author_words(record.author),
                        written_at_ms=written_at,
                        ancestors=tuple(_tainted_ancestors(access, record)),
                        seeded_by_demo=demo,
                    )
                )
    order = {ref: n for n, ref in enumerate(refs)}
    return sorted(stories, key=lambda story: order[(story.realm, story.record.id)])


def tile_story(*, access: Access, tile: Tile) -> TaintStory | None:
    """The story of TAINT WALL's first record, for the one line the tile itself shows."""
    first = [(item.realm, item.memory_id) for item in tile.evidence if item.fact == UNREVIEWED][:1]
    stories = taint_stories(access=access, refs=first)
    return stories[0] if stories else None


def _tainted_ancestors(access: Access, record: MemoryRecord) -> list[TaintedAncestor]:
    named = [(record.supersedes, "supersedes")] if record.supersedes else []
    named += [(memory_id, "derives from") for memory_id in record.derived_from]
    found = {r.id: r for r in records_by_id(realm_alias(record.realm), record.realm, [m for m, _ in named])}
    out = []
    for memory_id, relation in named:
        ancestor = found.get(memory_id)
        if ancestor is None or not (ancestor.ever_quarantined or ancestor.status == "quarantined"):
            continue
        if not record_visible(access, ancestor):
            # docs/access.md §2.8: a record the caller may not read is not described.
            out.append(TaintedAncestor(memory_id, relation, None, None, None, None, None))
            continue
        released_at, review = _own_write(record.realm, memory_id)
        reviewer = review.get("reviewer") if isinstance(review, dict) else None
        out.append(
            TaintedAncestor(
                memory_id=memory_id,
                relation=relation,
                title=ancestor.title,
                status=ancestor.status,
                quarantine_reason=(ancestor.status_detail if ancestor.status == "quarantined"
                                   else _text(review, "origin_quarantine_reason")),
                released_by=_text(reviewer, "kind") if review is not None else None,
                released_at_ms=released_at if review is not None else None,
            )
        )
    return out


def _own_write(realm: str, memory_id: str) -> tuple[int | None, dict[str, Any] | None]:
    """When the record's create or supersede was applied, and the review that wrote it, if one did."""
    row = realm_cursor(realm).execute(
        "SELECT applied_at_ms, detail FROM audit WHERE memory_id = %s AND op_kind IN ('create', 'supersede')"
        " ORDER BY audit_id LIMIT 1",
        [memory_id],
    ).fetchone()
    if row is None:
        return None, None
    try:
        detail = json.loads(row[1])
    except (TypeError, ValueError):
        detail = None
    review = detail.get("review") if isinstance(detail, dict) else None
    return row[0], review if isinstance(review, dict) else None


def _text(value: Any, key: str) -> str | None:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) and found else None


def _seeded_by_demo(realm: str) -> bool:
    if not store_format(realm).has("meerkat_schema"):
        return False
    return realm_cursor(realm).execute(
        "SELECT 1 FROM meerkat_schema WHERE domain = %s", [DEMO_LEDGER_DOMAIN]
    ).fetchone() is not None
