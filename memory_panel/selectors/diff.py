"""What changed between a version and the one it superseded, word by word (docs/search.md §7).

MobKit keeps every version as its own row (docs/store-format.md §4.2), so a lineage step's
change is the difference between two rows: title, body, tags, trust and kind, each compared as
words with ``difflib`` (whitespace kept as its own token, so the text reads back unchanged).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_panel.errors import AccessDenied, InvalidParams, NotFound
from memory_panel.signals import require_body_read_recorded
from memory_panel.store.realms import realm_alias
from memory_panel.store.records import MemoryRecord, decode_record
from memory_panel.store.rows import full_rows
from memory_panel.visibility import record_denial_action, record_visible

if TYPE_CHECKING:
    from access.caller import Access

DIFF_FIELDS = ("title", "body", "tags", "trust", "kind")
_WORDS = re.compile(r"\s+|\S+")


@dataclass(frozen=True)
class FieldDiff:
    field: str
    # ("same" | "removed" | "added", text) in reading order.
    segments: tuple[tuple[str, str], ...]

    @property
    def changed(self) -> bool:
        return any(op != "same" for op, _ in self.segments)

    @property
    def shown(self) -> tuple[tuple[str, str], ...]:
        """The segments as the page marks them: only words inside a change, words never touching.

        A change's edge whitespace is shown unmarked, so strikethrough and underline cover words
        alone, and a removed run directly followed by an added one gets a space between them: the
        page must read "Tomas Update", not "TomasUpdate" (docs/search.md §7).
        """
        out: list[tuple[str, str]] = []
        for op, text in self.segments:
            words = text.strip()
            if op == "same" or not words:
                out.append((op, text))
                continue
            lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
            if lead:
                out.append(("same", lead))
            elif out and out[-1][0] != "same":
                out.append(("same", " "))
            out.append((op, words))
            if trail:
                out.append(("same", trail))
        return tuple(out)


@dataclass(frozen=True)
class VersionDiff:
    version: MemoryRecord
    prior: MemoryRecord
    fields: tuple[FieldDiff, ...]


def word_diff(before: str, after: str) -> tuple[tuple[str, str], ...]:
    """``before`` → ``after`` as kept, removed and added runs of words."""
    old, new = _WORDS.findall(before), _WORDS.findall(after)
    segments: list[tuple[str, str]] = []

    def add(op: str, words: list[str]) -> None:
        if not words:
            return
        text = "".join(words)
        if segments and segments[-1][0] == op:
            segments[-1] = (op, segments[-1][1] + text)
        else:
            segments.append((op, text))

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            add("same", old[i1:i2])
        else:
            add("removed", old[i1:i2])
            add("added", new[j1:j2])
    return tuple(segments)


def version_diff(*, access: Access, realm: str, memory_id: str) -> VersionDiff:
    """The step from the record ``memory_id`` supersedes to ``memory_id``; both must be readable."""
    alias = realm_alias(realm)
    version = _full_record(access, alias, realm, memory_id)
    if not version.supersedes:
        raise InvalidParams(f"diff: record '{memory_id}' supersedes no record, so nothing changed")
    prior = _full_record(access, alias, realm, version.supersedes)
    fields = tuple(
        FieldDiff(name, word_diff(_field_text(prior, name), _field_text(version, name))) for name in DIFF_FIELDS
    )
    return VersionDiff(version, prior, fields)


def _full_record(access: Access, alias: str, realm: str, memory_id: str) -> MemoryRecord:
    row = full_rows(alias, realm).filter(memory_id=memory_id).first()
    if row is None:
        raise NotFound(f"unknown memory record '{memory_id}'")
    record = decode_record(realm, row)
    if not record_visible(access, record):
        raise AccessDenied(record_denial_action(access, record), record.id)
    require_body_read_recorded(access=access, records=[record])
    return record


def _field_text(record: MemoryRecord, name: str) -> str:
    if name == "tags":
        return ", ".join(record.tags)
    return getattr(record, name) or ""
