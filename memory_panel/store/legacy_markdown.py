"""MobKit's legacy markdown hot store, read as "not yet imported" memory (docs/runtime-surfaces.md §3).

Newer MobKit refuses ``store:"markdown"`` and imports ``<agent-memory>/<enc realm>/<enc identity>.md``
into the realm's SQLite file when the realm is opened, renaming each file ``.md.imported`` (or
``.md.import-failed``) afterwards (docs/store-format.md §9). Until then those records exist only in
the markdown files, so the console parses them with MobKit's own rules and shows them separately.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


FILE_BANNER = "# MobKit Agent Memory\n\n"
METADATA_PREFIX = "<!-- mobkit-agent-memory "
METADATA_SUFFIX = " -->"
END_MARKER = "<!-- /mobkit-agent-memory -->"
# docs/runtime-surfaces.md §3.4: reading a file larger than the retention cap fails, and so does recall over it.
READ_CAP_BYTES = 8 * 1024 * 1024
READ_CAP_MESSAGE = f"agent memory file exceeds bundled retention cap of {READ_CAP_BYTES} bytes"

PENDING = "pending"
IMPORTED = "imported"
IMPORT_FAILED = "import-failed"
# File suffix → import state, longest first so ".md.imported" is not read as ".md".
_SUFFIXES = ((".md.import-failed", IMPORT_FAILED), (".md.imported", IMPORTED), (".md", PENDING))


@dataclass(frozen=True)
class LegacyRecord:
    memory_id: str
    title: str
    body: str
    tags: list[str]
    created_at_ms: int
    updated_at_ms: int


@dataclass(frozen=True)
class ParsedMarkdown:
    records: list[LegacyRecord]
    skipped: int  # records dropped for an empty body or missing/invalid metadata (§3.3)


@dataclass(frozen=True)
class LegacyFile:
    realm: str
    identity: str
    file_name: str
    state: str  # PENDING, IMPORTED or IMPORT_FAILED
    size_bytes: int
    records: list[LegacyRecord] = field(default_factory=list)
    skipped: int = 0
    error: str | None = None  # the file could not be read (the 8 MiB cap, I/O)
    identity_valid: bool = True  # the importer skips a file whose stem is no agent identity


def is_structural_line(line: str) -> bool:
    """A body line the parser would take for a marker (so it is written with a leading ``\\``)."""
    trimmed = line.strip()
    return trimmed == END_MARKER or trimmed.startswith(METADATA_PREFIX)


def escape_body_line(line: str) -> str:
    return "\\" + line if is_structural_line(line) else line


def unescape_body_line(line: str) -> str:
    # docs/runtime-surfaces.md §3.2: one leading backslash goes only when what follows is structural.
    if line.startswith("\\") and is_structural_line(line[1:]):
        return line[1:]
    return line


def render_markdown(records: list[LegacyRecord]) -> str:
    """The file MobKit writes for these records: oldest first by (created, updated, id) (§3.2)."""
    ordered = sorted(records, key=lambda r: (r.created_at_ms, r.updated_at_ms, r.memory_id))
    parts = [FILE_BANNER]
    for record in ordered:
        metadata = json.dumps(
            {
                "memory_id": record.memory_id,
                "tags": record.tags,
                "created_at_ms": record.created_at_ms,
                "updated_at_ms": record.updated_at_ms,
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )
        body = "\n".join(escape_body_line(line) for line in record.body.split("\n"))
        parts.append(
            f"## {record.title}\n{METADATA_PREFIX}{metadata}{METADATA_SUFFIX}\n{body}\n{END_MARKER}\n\n"
        )
    return "".join(parts)


def _parse_metadata(line: str) -> dict[str, Any] | None:
    trimmed = line.strip()
    if not trimmed.startswith(METADATA_PREFIX) or not trimmed.endswith(METADATA_SUFFIX):
        return None
    try:
        value = json.loads(trimmed[len(METADATA_PREFIX) : -len(METADATA_SUFFIX)])
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("memory_id"), str):
        return None
    tags = value.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        return None
    for stamp in ("created_at_ms", "updated_at_ms"):
        ms = value.get(stamp)
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            return None
    return value


def parse_markdown(text: str) -> ParsedMarkdown:
    """Records in file order, MobKit's parser rules (docs/runtime-surfaces.md §3.3)."""
    records: list[LegacyRecord] = []
    skipped = 0
    title: str | None = None
    metadata: dict[str, Any] | None = None
    body: list[str] = []

    def flush() -> None:
        nonlocal skipped
        text = "\n".join(body).strip()
        if metadata is None or not text:
            skipped += 1
            return
        records.append(
            LegacyRecord(
                memory_id=metadata["memory_id"],
                title=title or "",
                body=text,
                tags=list(metadata.get("tags", [])),
                created_at_ms=metadata["created_at_ms"],
                updated_at_ms=metadata["updated_at_ms"],
            )
        )

    # str.splitlines would also split on \x0b, \x1c, U+2028…; MobKit splits on \n (and drops \r).
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        # A heading opens a record only while the open one still lacks metadata: after the
        # metadata line, "## " is ordinary body text (§3.2).
        if line.startswith("## ") and (title is None or metadata is None):
            if title is not None:
                flush()
            title, metadata, body = line[3:].strip(), None, []
            continue
        if title is None:
            continue  # the banner and anything else before the first heading
        if metadata is None:
            parsed = _parse_metadata(line)
            if parsed is not None:
                metadata = parsed
                continue
        if line.strip() == END_MARKER:
            flush()
            title, metadata, body = None, None, []
            continue
        body.append(unescape_body_line(line))
    if title is not None:
        flush()
    return ParsedMarkdown(records, skipped)


def read_markdown_file(path: Path) -> ParsedMarkdown:
    """Parse one file; raises ValueError with MobKit's message when it exceeds the read cap."""
    if path.stat().st_size > READ_CAP_BYTES:
        raise ValueError(READ_CAP_MESSAGE)
    return parse_markdown(path.read_bytes().decode("utf-8", errors="replace"))


def is_agent_identity(value: str) -> bool:
    """docs/runtime-surfaces.md §2: non-empty, no whitespace, no '/'; colons are fine."""
    return bool(value) and "/" not in value and not any(ch.isspace() for ch in value)


def import_state(name: str) -> tuple[str | None, str]:
    for suffix, state in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return state, name[: -len(suffix)]
    return None, name


def read_legacy_file(path: Path, realm: str, identity: str, state: str) -> LegacyFile:
    size = path.stat().st_size
    try:
        parsed = read_markdown_file(path)
    except (OSError, ValueError) as error:
        return LegacyFile(
            realm, identity, path.name, state, size,
            error=str(error), identity_valid=is_agent_identity(identity),
        )
    return LegacyFile(
        realm, identity, path.name, state, size,
        records=parsed.records, skipped=parsed.skipped,
        identity_valid=is_agent_identity(identity),
    )
