"""Strict JSON for request bodies: the one decoder behind ``POST /console/rpc`` and ``/console/events``.

Python's ``json.loads`` accepts more than JSON (RFC 8259) and more than the console can answer or
store: ``NaN``/``Infinity`` (and ``1e999``, which overflows to infinity) cannot be written back as
JSON, a lone surrogate escape (``"\\ud800"``) is no Unicode text and fails later when encoded, and
deep nesting raises RecursionError. Each is refused here with the field it was found in.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 64  # RPC params are flat and event data shallow; far below json's recursion limit
MAX_SHOWN_STEPS = 6  # a path into deep nesting is named by its first steps
_SURROGATE = re.compile("[\ud800-\udfff]")

Path = tuple[str | int, ...]


class JsonBodyError(ValueError):
    """Valid-looking JSON the console refuses; ``path`` leads to the bad value (empty: the body)."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem

    def field(self, *, single: str, batch: str) -> str:
        """The bad field as an endpoint names it: ``event.data.x`` or ``events[2].data.x``."""
        if not self.path:
            return "body"
        name = batch if isinstance(self.path[0], int) else single
        shown = "".join(_step(part) for part in self.path[:MAX_SHOWN_STEPS])
        return name + shown + ("…" if len(self.path) > MAX_SHOWN_STEPS else "")


def _step(part: str | int) -> str:
    if isinstance(part, int):
        return f"[{part}]"
    # The key itself may hold the lone surrogate: never echo one back (the reply must be JSON).
    return "." + part.encode("utf-8", "backslashreplace").decode("utf-8")


class _Refused:
    """Stands in for a number the decoder met and JSON cannot carry, until its path is known."""

    def __init__(self, text: str) -> None:
        self.text = text


def _number(text: str) -> float | _Refused:
    value = float(text)
    return value if math.isfinite(value) else _Refused(text)


def json_loads_strict(raw: bytes | str) -> Any:
    """``json.loads`` that raises JsonBodyError for non-finite numbers, lone surrogates and nesting
    deeper than MAX_DEPTH, and ValueError (as ``json.loads``) for text that is not JSON at all."""
    try:
        value = json.loads(raw, parse_constant=_Refused, parse_float=_number)
    except RecursionError as error:
        raise JsonBodyError((), f"nested deeper than {MAX_DEPTH} levels") from error
    _check(value)
    return value


def _check(root: Any) -> None:
    # Iterative, so the walk cannot hit the recursion limit the decoder just stayed under.
    stack: list[tuple[Path, Any]] = [((), root)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Refused):
            raise JsonBodyError(path, f"{value.text} is not a finite number (JSON has no NaN or Infinity)")
        if isinstance(value, str):
            _check_text(path, value)
        elif isinstance(value, (dict, list)):
            if len(path) >= MAX_DEPTH:
                raise JsonBodyError(path, f"nested deeper than {MAX_DEPTH} levels")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in reversed(list(items)):  # reversed: the first bad field is reported
                if isinstance(key, str):
                    _check_text(path + (key,), key)
                stack.append((path + (key,), item))


def _check_text(path: Path, text: str) -> None:
    match = _SURROGATE.search(text)
    if match:
        raise JsonBodyError(path, f"lone surrogate \\u{ord(match.group()):04x} is not valid Unicode")
