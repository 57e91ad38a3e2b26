"""Hypothesis strategies for hostile JSON: lone surrogates, huge integers, NaN/Infinity, deep nesting."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

# Every code point, surrogates (category Cs) included: a JSON string can spell one as "\ud800".
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
numbers = (
    st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**64 + 2)
    | st.sampled_from([-1, 0, 2**64, -(2**63) - 1, 10**30])
    | st.floats(allow_nan=True, allow_infinity=True)
)
# Strings past a file name's 255 bytes or int()'s 4,300 digits, and cursor-shaped ones.
long_text = st.builds(str.__mul__, st.sampled_from(["r", "9", "é"]), st.sampled_from([255, 256, 5000]))
cursors = st.builds("{}:{}".format, st.integers(min_value=-1) | long_text, any_text)
leaves = st.none() | st.booleans() | numbers | any_text | long_text | cursors
json_values = st.recursive(
    leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3), max_leaves=8
)


def nested(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


# Deep enough to pass the console's 64 levels, and deep enough to crash json's recursion.
deep_values = st.builds(nested, leaves, st.sampled_from([63, 65, 200, 1200]))
hostile_values = json_values | deep_values


def dumps(value: Any) -> str:
    """JSON text as a hostile client writes it: NaN/Infinity literals, surrogates as \\u escapes."""
    return json.dumps(value, allow_nan=True)
