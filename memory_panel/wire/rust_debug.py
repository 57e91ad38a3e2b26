"""MobKit shows some stored JSON the way Rust's ``Debug`` prints it; the console matches that text."""

from __future__ import annotations

from typing import Any


def author_debug(author: Any) -> str:
    """MobKit renders a proposal's author with Rust's Debug format, e.g. ``Agent { identity: "x" }``."""
    if not isinstance(author, dict) or not isinstance(author.get("author"), str):
        return "Unknown"
    variant = author["author"].capitalize()
    fields = [f"{k}: {_debug_str(v)}" for k, v in author.items() if k != "author"]
    return f"{variant} {{ {', '.join(fields)} }}" if fields else variant


def _debug_str(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)
