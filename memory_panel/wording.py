"""MobKit's wire values as a person reads them (docs/daily-use.md §8).

The wire keeps MobKit's exact text (an author as Rust prints it, ``true``, ``agent_observed``);
pages say the same things in words through these functions, and only through them.
"""

from __future__ import annotations

import re
from typing import Any

# Rust's Debug form of a MemoryAuthor (memory_panel/wire/rust_debug.py writes it):
# ``Agent { identity: "identity:luka" }``, ``Steward { run_id: "dream-1" }``, ``Operator``.
_DEBUG_AUTHOR = re.compile(r"([A-Z][A-Za-z]*)(?: \{ (.*) \})?")
_DEBUG_FIELD = re.compile(r'(\w+): ("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)')
_ENUM = re.compile(r"[a-z]+(?:_[a-z]+)+")


def author_words(author: Any) -> str:
    """``agent identity:luka``, ``steward (dream …)``, ``distiller (run …)``, ``operator``, ``application``.

    Takes a MemoryAuthor as stored (``{"author": "agent", "identity": …}``) or as the wire's Rust
    Debug string; anything else is shown as it came, or "an unknown author".
    """
    if isinstance(author, str):
        parsed = _parse_debug(author)
        if parsed is None:
            return author or "an unknown author"
        author = parsed
    if not isinstance(author, dict) or not isinstance(author.get("author"), str):
        return "an unknown author"
    tag = author["author"]
    if tag == "agent" and isinstance(author.get("identity"), str):
        return f"agent {author['identity']}"
    if tag == "steward" and isinstance(author.get("run_id"), str):
        return f"steward (dream {author['run_id']})"
    if tag == "distiller" and isinstance(author.get("run_id"), str):
        return f"distiller (run {author['run_id']})"
    return tag


def _parse_debug(text: str) -> dict[str, str] | None:
    match = _DEBUG_AUTHOR.fullmatch(text)
    if match is None:
        return None
    fields = {key: _unquote(value) for key, value in _DEBUG_FIELD.findall(match.group(2) or "")}
    return {"author": match.group(1).lower(), **fields}


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def scope_words(kind: str, key: str) -> str:
    """``identity:luka``, ``mob ops``, ``operator oncall``, ``realm`` (docs/daily-use.md §4).

    An identity's scope key is already the whole identity (``identity:luka``), so it is the label
    as it stands; prefixing the kind again read "identity identity:luka".
    """
    if kind == "realm" or not key:
        return kind
    return key if key.startswith(f"{kind}:") else f"{kind} {key}"


def count_words(count: int, noun: str) -> str:
    """``1 record``, ``2 records``: a count with its noun, singular for one."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def value_words(value: Any) -> str:
    """A wire value in words: ``true`` → "yes", ``null`` → "—", ``agent_observed`` → "agent observed"."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "—"
    text = str(value)
    return text.replace("_", " ") if _ENUM.fullmatch(text) else text
