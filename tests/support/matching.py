"""The search contract's matching rule, stated independently of the console's search code.

Every word or quoted phrase must appear, as whole words, in the title, body or tags; no stemming;
case and diacritics folded (unicode61 tokens: runs of letters and digits).
"""

from __future__ import annotations

import re
import unicodedata

from tests.support.written import Written


def words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text.casefold())
    return re.findall(r"[^\W_]+", "".join(c for c in folded if not unicodedata.combining(c)))


def matches(row: Written, *terms: str) -> bool:
    haystacks = [words(row.title), words(row.body), words(" ".join(row.tags))]
    for term in terms:
        needle = words(term)
        if not any(hay[i : i + len(needle)] == needle for hay in haystacks for i in range(len(hay))):
            return False
    return True
