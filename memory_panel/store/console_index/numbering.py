"""Numbered texts: what both indexes store once per value, not once per record (docs/realm-index.md §3).

A scope, status, kind or trust text is kept once in ``labels``/``scopes`` and referred to by
number; a build numbers each distinct text of the attached realm once and copies every row inside
SQLite, joined to those numbers (docs/realm-index.md §5). ``NumberedFilters`` turns the records
filters into conditions on the numbers.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from memory_panel.store.console_index.generations import REALM
from memory_panel.store.record_filter import RecordFilter

# Columns holding a realm's own values have no declared type, so a value a hand edit left as a
# number or a BLOB is kept as it is, as the direct read sees it.
NUMBERING_SCHEMA = (
    "CREATE TABLE labels (label INTEGER PRIMARY KEY, text NOT NULL UNIQUE)",
    "CREATE TABLE scopes (scope INTEGER PRIMARY KEY, scope_kind INTEGER NOT NULL, scope_key NOT NULL,"
    " UNIQUE (scope_kind, scope_key))",
)
# An index row's scope as text: joins ``scopes s`` and ``labels l`` to the alias' ``scope`` column.
SCOPE_TEXT = "CROSS JOIN scopes s ON s.scope = {alias}.scope CROSS JOIN labels l ON l.label = s.scope_kind"


class Numbering:
    """Numbers each text and scope once, reading and extending the index's own tables."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.labels = {_text_key(text): label for label, text in conn.execute("SELECT label, text FROM labels")}
        self.scopes = {
            (kind, _text_key(key)): scope for scope, kind, key in conn.execute("SELECT scope, scope_kind, scope_key FROM scopes")
        }

    def label(self, text: Any) -> int:
        key = _text_key(text)
        label = self.labels.get(key)
        if label is None:
            label = self.labels[key] = len(self.labels) + 1
            self.conn.execute("INSERT INTO labels VALUES (?, ?)", (label, text))
        return label

    def scope(self, kind: int, key: Any) -> int:
        wanted = (kind, _text_key(key))
        scope = self.scopes.get(wanted)
        if scope is None:
            scope = self.scopes[wanted] = len(self.scopes) + 1
            self.conn.execute("INSERT INTO scopes VALUES (?, ?, ?)", (scope, kind, key))
        return scope


# docs/realm-index.md §5: a build numbers each distinct text of the attached realm once, here, then
# copies every row inside SQLite, joined to these maps from the realm's own values to their numbers.
# The maps live in the build connection's temp schema, never in the generation.
_NUMBER_MAPS = (
    "CREATE TEMP TABLE label_of (raw UNIQUE, label INTEGER)",
    "CREATE TEMP TABLE scope_of (kind_raw, key_raw, kind_label INTEGER, scope INTEGER, UNIQUE (kind_raw, key_raw))",
    # Answered from the store's (scope_kind, scope_key, status_kind) index, without reading rows.
    f"INSERT INTO temp.scope_of (kind_raw, key_raw) SELECT DISTINCT scope_kind, scope_key FROM {REALM}.records",
    f"CREATE TEMP TABLE row_labels AS SELECT DISTINCT status_kind, kind, trust FROM {REALM}.records",
    "INSERT OR IGNORE INTO temp.label_of (raw) SELECT kind_raw FROM temp.scope_of UNION ALL"
    " SELECT status_kind FROM temp.row_labels UNION ALL SELECT kind FROM temp.row_labels"
    " UNION ALL SELECT trust FROM temp.row_labels",
)
# Joins the attached realm's row ``r`` to its numbers: ``s.kind_label``, ``s.scope``, ``st.label``
# (status), ``k.label`` (kind) and ``t.label`` (trust). Unary + drops the realm column's TEXT
# affinity, so a value matches only a value of its own type, as ``Numbering`` tells them apart.
NUMBERED_REALM_ROW = (
    "CROSS JOIN temp.scope_of s ON s.kind_raw = +r.scope_kind AND s.key_raw = +r.scope_key"
    " CROSS JOIN temp.label_of st ON st.raw = +r.status_kind"
    " CROSS JOIN temp.label_of k ON k.raw = +r.kind CROSS JOIN temp.label_of t ON t.raw = +r.trust"
)


def number_realm_texts(out: sqlite3.Connection) -> Numbering:
    """Number every distinct text of the attached realm, and fill the maps ``NUMBERED_REALM_ROW`` joins.

    Python sees each distinct value once (as the direct read decodes it), not once per row.
    """
    for statement in _NUMBER_MAPS:
        out.execute(statement)
    numbering = Numbering(out)
    labels = out.execute("SELECT rowid, raw FROM temp.label_of").fetchall()
    numbered_labels = [(numbering.label(raw), n) for n, raw in labels]
    out.executemany("UPDATE temp.label_of SET label = ? WHERE rowid = ?", numbered_labels)
    scopes = out.execute("SELECT rowid, kind_raw, key_raw FROM temp.scope_of").fetchall()
    numbered = []
    for n, kind, key in scopes:
        label = numbering.label(kind)
        numbered.append((label, numbering.scope(label, key), n))
    out.executemany("UPDATE temp.scope_of SET kind_label = ?, scope = ? WHERE rowid = ?", numbered)
    return numbering


def _text_key(value: Any) -> tuple[str, Any]:
    # 5 and '5' are different values in a column with no type; Python's dict would not tell 1 and 1.0 apart.
    return (type(value).__name__, value)


class NumberedFilters:
    """Equality filters on texts, as conditions on the numbers an index stores for them."""

    def __init__(self, conn: sqlite3.Connection, alias: str) -> None:
        self.conn = conn
        self.alias = alias
        self.where: list[str] = []
        self.args: list = []

    def labels(self, texts: Iterable[Any]) -> list[int]:
        texts = list(texts)
        if not texts:
            return []
        rows = self.conn.execute(f"SELECT label FROM labels WHERE text IN ({', '.join('?' * len(texts))})", texts)
        return [row[0] for row in rows]

    def records(self, filters: RecordFilter) -> None:
        """What both indexes filter alike: equality on each text, never a hidden scope kind, only the
        listed scopes. The reviewer-only rule is each index's own (``RecordFilter.hide_reviewer_only``)."""
        if filters.scope_key is not None:
            self.scopes_in([(filters.scope_kind, filters.scope_key)])
        elif filters.scope_kind is not None:
            self._equal_any("scope_kind", self.labels([filters.scope_kind]))
        self.equal("status", filters.status)
        self.equal("kind", filters.kind)
        self.equal("trust", filters.trust)
        self.exclude("scope_kind", filters.hidden_scope_kinds)
        if filters.scopes is not None:
            self.scopes_in(filters.scopes)

    def scopes_in(self, scopes: Iterable[tuple[str | None, str]]) -> None:
        """Only these (kind, key) scopes; a kind of None matches the key in any kind."""
        scopes = list(scopes)
        pairs = [(kind, key) for kind, key in scopes if kind is not None]
        numbers: list[int] = []
        for start in range(0, len(pairs), 400):
            chunk = pairs[start : start + 400]
            numbers += [row[0] for row in self.conn.execute(
                "SELECT s.scope FROM scopes s JOIN labels l ON l.label = s.scope_kind"
                f" WHERE (l.text, s.scope_key) IN (VALUES {', '.join(['(?, ?)'] * len(chunk))})",
                [part for pair in chunk for part in pair],
            )]
        for key in [key for kind, key in scopes if kind is None]:
            numbers += [row[0] for row in self.conn.execute("SELECT scope FROM scopes WHERE scope_key = ?", (key,))]
        self._equal_any("scope", numbers)

    def equal(self, column: str, value: str | None) -> None:
        if value is not None:
            self._equal_any(column, self.labels([value]))

    def exclude(self, column: str, values: Iterable[str]) -> None:
        numbers = self.labels(values)
        if numbers:
            self.where.append(f"{self.alias}.{column} NOT IN ({', '.join('?' * len(numbers))})")
            self.args += numbers

    def _equal_any(self, column: str, numbers: list[int]) -> None:
        if not numbers:
            self.where.append("0")  # a text the index never saw: nothing matches
        elif len(numbers) == 1:
            self.where.append(f"{self.alias}.{column} = ?")
            self.args.append(numbers[0])
        else:
            self.where.append(f"{self.alias}.{column} IN ({', '.join('?' * len(numbers))})")
            self.args += numbers
