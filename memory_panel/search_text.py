"""Search queries and the text they match: parsing, FTS5 match strings, snippets (docs/search.md §2).

The console's search index tokenizes with FTS5's ``unicode61`` tokenizer (letters and digits,
case folded, diacritics removed, no stemming); ``tokens`` here follows the same rules, so the
words a snippet marks are the words the index matched.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from memory_panel.errors import InvalidParams

# Snippet markers on the wire (docs/wire-contract.md §C.4): private-use code points that
# record text cannot be mistaken for, since they are stripped from it first.
MARK_START = "\ue000"
MARK_END = "\ue001"
QUERY_MAX_CHARS = 500
QUERY_MAX_TERMS = 16
SNIPPET_TOKENS = 28
SNIPPET_LEAD = 8

# unicode61: a token is a run of letters, digits and private-use characters; "_" separates.
_TOKEN = re.compile(r"[^\W_]+")
_PART = re.compile(r'"([^"]*)"|([^\s"]+)')


@dataclass(frozen=True)
class SearchQuery:
    """A parsed query: every term (a word, or a quoted phrase of words) must match."""

    text: str
    terms: tuple[tuple[str, ...], ...]

    @property
    def match(self) -> str:
        """The FTS5 MATCH expression: each term a quoted phrase, implicitly AND-ed."""
        return " ".join('"' + " ".join(term) + '"' for term in self.terms)


def fold(word: str) -> str:
    """A token as unicode61 remove_diacritics=2 indexes it: case folded, combining marks removed."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokens(text: str) -> list[str]:
    return [fold(m.group()) for m in _TOKEN.finditer(text)]


def parse_query(raw: object) -> SearchQuery:
    """Words and ``"quoted phrases"``; anything that cannot be searched is InvalidParams naming why."""
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidParams("query is required: give one or more words to search for")
    text = raw.strip()
    if len(text) > QUERY_MAX_CHARS:
        raise InvalidParams(f"query is longer than {QUERY_MAX_CHARS} characters")
    if text.count('"') % 2:
        raise InvalidParams('query has an unclosed quote (")')
    terms: list[tuple[str, ...]] = []
    for phrase, word in _PART.findall(text):
        # A word with punctuation inside ("e-mail") is the phrase of its parts, as FTS5 reads it.
        term = tuple(tokens(phrase if phrase else word))
        if term and term not in terms:
            terms.append(term)
    if not terms:
        raise InvalidParams("query has no words to search for (letters or digits)")
    if len(terms) > QUERY_MAX_TERMS:
        raise InvalidParams(f"query has more than {QUERY_MAX_TERMS} words and phrases")
    return SearchQuery(text, tuple(terms))


def clean(text: str) -> str:
    """Record text without the marker code points, so a record cannot forge a highlight."""
    return text.replace(MARK_START, "").replace(MARK_END, "")


def _spans(text: str, query: SearchQuery) -> tuple[list[re.Match], list[tuple[int, int]]]:
    """The text's token matches, and the (first, last) token index of every matched term."""
    found = list(_TOKEN.finditer(text))
    folded = [fold(m.group()) for m in found]
    spans: list[tuple[int, int]] = []
    for term in query.terms:
        width = len(term)
        for start in range(len(folded) - width + 1):
            if tuple(folded[start : start + width]) == term:
                spans.append((start, start + width - 1))
    return found, sorted(spans)


def _marked(text: str, found: list[re.Match], spans: list[tuple[int, int]], first: int, last: int) -> str:
    """``text`` from token ``first`` to ``last`` with every span inside marked."""
    begin = found[first].start() if first > 0 else 0
    end = found[last].end() if last < len(found) - 1 else len(text)
    out: list[str] = []
    position = begin
    covered = -1
    for start, stop in spans:
        if start < first or stop > last or start <= covered:
            continue  # outside the window, or overlapping a span already marked
        out += [text[position : found[start].start()], MARK_START, text[found[start].start() : found[stop].end()], MARK_END]
        position = found[stop].end()
        covered = stop
    out.append(text[position:end])
    return ("…" if begin > 0 else "") + "".join(out) + ("…" if end < len(text) else "")


def highlight(text: str, query: SearchQuery) -> str:
    """The whole of ``text`` with its matches marked (titles)."""
    text = clean(text)
    found, spans = _spans(text, query)
    return _marked(text, found, spans, 0, len(found) - 1) if found else text


def snippet(query: SearchQuery, *, title: str, body: str, tags: list[str]) -> str:
    """The passage that matched: a window of the body around its first match, else the title or tags."""
    for text in (clean(body), clean(title), clean(", ".join(tags))):
        found, spans = _spans(text, query)
        if spans:
            first = max(0, spans[0][0] - SNIPPET_LEAD)
            last = min(len(found) - 1, first + SNIPPET_TOKENS - 1)
            return _marked(text, found, spans, first, last)
    # Matched through text no longer held (an orphaned hand edit): show the body's start plainly.
    body = clean(body)
    found = list(_TOKEN.finditer(body))
    return _marked(body, found, [], 0, min(len(found), SNIPPET_TOKENS) - 1) if found else body
