"""A legacy markdown memory file beside the main demo realm, waiting for MobKit's import.

docs/runtime-surfaces.md §3: ``<agent-memory>/<enc realm>/<enc identity>.md`` in the markdown hot
store's exact format; the runtime imports it into the realm's SQLite file the next time it opens
the realm (docs/store-format.md §9), so until then the console lists it on the legacy page.
"""

from __future__ import annotations

from pathlib import Path

from memory_panel.simulator.demo.cast import DAY_MS
from memory_panel.simulator.store_writer import new_memory_id, normalize_tags
from memory_panel.store.legacy_markdown import LegacyRecord, render_markdown
from memory_panel.store.realms import encode_path_segment

LEGACY_IDENTITY = "identity:luka"
# (title, body, tags, days before now): notes from the markdown era, before the SQLite store.
_NOTES = (
    ("Keeps receipts in the blue travel wallet",
     "Luka files paper receipts in the blue travel wallet and scans them on Fridays.", ["expenses"], 160),
    ("Prefers morning flights out of Berlin",
     "For Berlin departures Luka books the first flight out so he is home by the evening.",
     ["flights", "travel"], 150),
    ("Allergic to penicillin",
     "Luka mentioned a penicillin allergy when the team planned the hiking day.\n"
     "Tell the venue's first-aid contact on any outdoor offsite.", ["health"], 140),
)


def legacy_markdown_path(root: Path, realm: str, identity: str = LEGACY_IDENTITY) -> Path:
    return root / encode_path_segment(realm) / f"{encode_path_segment(identity)}.md"


def write_legacy_markdown(root: Path, realm: str, *, now_ms: int) -> Path:
    """The file as MobKit's markdown store writes it (overwrites an earlier demo file)."""
    records = []
    for title, body, tags, days in _NOTES:
        at = now_ms - days * DAY_MS
        records.append(LegacyRecord(memory_id=new_memory_id(title, body), title=title, body=body,
                                    tags=normalize_tags(tags), created_at_ms=at, updated_at_ms=at))
    path = legacy_markdown_path(root, realm)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_markdown(records), encoding="utf-8")
    return path
