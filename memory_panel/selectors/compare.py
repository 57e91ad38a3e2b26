"""Two realms compared by logical key: records matched by scope and title (docs/history.md §6).

A record's logical key is its scope (kind and key) and title: the same note written in two realms
(a staging copy, a replica restored elsewhere) has two ids but one key. Only active records are
compared, as they stand now or, with a moment, as they stood then (the realm's history file), and
only those the caller may see in each realm.

No body is read to compare. ``content_hash`` covers a record's title and body byte for byte
(docs/store-format.md §4.4), so an active record whose scope and hash an active record of the
other realm shares holds the same note there. SQLite finds the records with no such twin by
merging the two realms' ``records_scope_hash_idx`` in compound ``EXCEPT`` statements, a range of
(scope, hash) each; only those records, and the ones sharing a title with them, are read as rows.
The result depends on the two files alone, so it is worked out once for every scope and kept
while neither file moves; each caller is shown its part, the scopes it may see.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db import connections

from memory_panel.cursor import SQLITE_INT_MAX
from memory_panel.errors import InvalidParams, UnknownRealm
from memory_panel.selectors.diff import FieldDiff, word_diff
from memory_panel.signals import require_body_read_recorded
from memory_panel.store.history_file import realm_history
from memory_panel.store.realm_memo import realms_memo
from memory_panel.store.realms import readonly_uri, realm_alias, realm_path
from memory_panel.store.rows import named_rows, realm_read
from memory_panel.visibility import record_visible, scope_checker

if TYPE_CHECKING:
    from access.caller import Access

LogicalKey = tuple[str, str, str]  # (scope_kind, scope_key, title)
Scope = tuple[str, str]
Bound = tuple[str, str, str]  # (scope_kind, scope_key, content_hash)
LISTS = ("only_in_realm", "only_in_against", "differing")
# Records without a twin in the other realm past which two realms are not copies of one another:
# listing that many differences would hold both realms in memory, so the comparison is refused.
MAX_UNMATCHED = 100_000
# Records one statement reads at most, so that each stays inside the realm query time limit
# (docs/serving.md §3) even with the realm files out of the OS page cache: merging a million
# records' hash indexes from disk measured about 2 s of CPU in one statement.
CHUNK_RECORDS = 200_000
# (scope, hash) pairs one statement looks up.
_LOOKUPS = 10_000
# The schema name the other realm's file is attached under, beside "main".
_OTHER = "compared_realm"
_ROW = "r.scope_kind, r.scope_key, r.title, r.content_hash, r.updated_at_ms, r.memory_id"
_Row = tuple[str, str, str, str, int, str]


@dataclass(frozen=True, slots=True)
class Keyed:
    """One realm's active record under a logical key (the newest, when several share it)."""

    memory_id: str
    content_hash: str
    updated_at_ms: int


@dataclass(frozen=True, slots=True)
class Difference:
    """A logical key and its record in ``realm`` (``mine``) and in ``against`` (``theirs``)."""

    key: LogicalKey
    mine: Keyed | None
    theirs: Keyed | None


@dataclass
class _ScopeDifferences:
    """One scope's part, built once and then only read (it is kept and shared between requests)."""

    alike: int = 0
    lists: dict[str, list[Difference]] = field(default_factory=lambda: {name: [] for name in LISTS})  # by title


@dataclass(frozen=True)
class ComparisonList:
    rows: list[Difference]
    next_cursor: LogicalKey | None


@dataclass(frozen=True)
class RealmComparison:
    """The keys only in one realm, only in the other, in both with another body (each counted, and
    a page of each list asked for), and the count of keys alike in both."""

    realm: str
    against: str
    counts: dict[str, int]
    lists: dict[str, ComparisonList]


@dataclass(frozen=True)
class _Moment:
    """A realm at a moment: its active records by scope then, and the records whose being active
    then differs from now (active then only, or now only)."""

    records: dict[Scope, int]
    revived: list[str]
    retired: list[str]


def compare_realms(*, access: Access, realm: str, against: str, at_ms: int | None = None, limit: int,
                   only: str | None = None, after: LogicalKey | None = None) -> RealmComparison:
    """``realm`` against ``against`` by logical key: every count, and a page of ``limit`` keys of each
    list (of ``only``, when named, from after the key ``after``), sorted by key."""
    if only is not None and only not in LISTS:
        raise InvalidParams(f"list must be one of {', '.join(LISTS)}")
    if after is not None and only is None:
        raise InvalidParams("a cursor pages one list: name it with list")
    scoped = _visible(access, _differences(realm, against, at_ms))
    counts = {name: sum(len(found.lists[name]) for _, found in scoped) for name in LISTS}
    counts["alike"] = sum(found.alike for _, found in scoped)
    lists = {name: _page(scoped, name, after, limit) for name in ((only,) if only else LISTS)}
    return RealmComparison(realm, against, counts, lists)


def every_difference(*, access: Access, realm: str, against: str,
                     at_ms: int | None = None) -> Iterator[tuple[str, Difference]]:
    """Every key of every list the caller may see, list by list, each sorted by key."""
    scoped = _visible(access, _differences(realm, against, at_ms))
    for name in LISTS:
        for _, found in scoped:
            for difference in found.lists[name]:
                yield name, difference


def body_diffs(*, access: Access, comparison: RealmComparison) -> dict[LogicalKey, FieldDiff | None]:
    """The word diff from ``against``'s body to ``realm``'s for each differing key on the page: the
    only bodies the comparison reads. None where either record is not the caller's to read now."""
    shown = comparison.lists.get("differing", ComparisonList([], None)).rows
    if not shown:
        return {}
    with realm_read(comparison.realm, alone=True):
        mine = {row.id: row for row in named_rows(comparison.realm, [d.mine.memory_id for d in shown if d.mine], with_body=True)}
    with realm_read(comparison.against, alone=True):
        theirs = {row.id: row for row in named_rows(comparison.against, [d.theirs.memory_id for d in shown if d.theirs],
                                                    with_body=True)}
    out: dict[LogicalKey, FieldDiff | None] = {}
    for difference in shown:
        after = mine.get(difference.mine.memory_id) if difference.mine else None
        before = theirs.get(difference.theirs.memory_id) if difference.theirs else None
        if after is None or before is None or not (record_visible(access, after) and record_visible(access, before)):
            out[difference.key] = None
            continue
        require_body_read_recorded(access=access, records=[after, before])
        out[difference.key] = FieldDiff("body", word_diff(before.body or "", after.body or ""))
    return out


def _visible(access: Access, differences: dict[Scope, _ScopeDifferences]) -> list[tuple[Scope, _ScopeDifferences]]:
    # An active record is the caller's to see when its scope is (docs/access.md §2.4): the scope
    # decides for every key under it, in both realms.
    visible = scope_checker(access)
    return sorted(((scope, found) for scope, found in differences.items() if visible(*scope)), key=lambda item: item[0])


def _page(scoped: list[tuple[Scope, _ScopeDifferences]], name: str, after: LogicalKey | None,
          limit: int) -> ComparisonList:
    rows: list[Difference] = []
    for scope, found in scoped:
        listed = found.lists[name]
        start = 0
        if after is not None:
            if scope < after[:2]:
                continue
            if scope == after[:2]:
                start = bisect_right(listed, after[2], key=lambda difference: difference.key[2])
        for difference in listed[start:]:
            if len(rows) == limit:
                return ComparisonList(rows, rows[-1].key)
            rows.append(difference)
    return ComparisonList(rows, None)


def _differences(realm: str, against: str, at_ms: int | None) -> dict[Scope, _ScopeDifferences]:
    if realm == against:
        raise InvalidParams("against must name another realm than realm")
    try:
        alias = realm_alias(realm)
        realm_alias(against)
    except UnknownRealm as error:
        raise InvalidParams(str(error)) from error
    return realms_memo([realm, against], ("compare", at_ms),
                       lambda: (_read_differences(alias, realm, against, at_ms), True))


def _read_differences(alias: str, realm: str, against: str, at_ms: int | None) -> dict[Scope, _ScopeDifferences]:
    mine = _Side("main", _moment(realm, at_ms) if at_ms is not None else None)
    theirs = _Side(_OTHER, _moment(against, at_ms) if at_ms is not None else None)
    with realm_read(realm, alone=True), connections[alias].cursor() as cursor:
        with realm_read(against, alone=True):
            cursor.execute(f"ATTACH DATABASE %s AS {_OTHER}", [readonly_uri(realm_path(against))])
        try:
            return _classify(cursor, mine, theirs)
        finally:
            cursor.execute(f"DETACH DATABASE {_OTHER}")


@dataclass
class _Side:
    """One realm of the pair: its schema on the connection, the moment it is compared at, and the
    rowids of its records not active then, by scope (``read_inactive``)."""

    db: str
    moment: _Moment | None
    inactive: dict[Scope, list[int]] = field(default_factory=dict)

    def active(self) -> tuple[str, list]:
        """A ``WHERE`` term for the records ``r`` active (now, or at the moment), on the row's status."""
        if self.moment is None:
            return "r.status_kind = 'active'", []
        return ("(r.status_kind = 'active' AND r.memory_id NOT IN (SELECT value FROM json_each(%s))"
                " OR r.memory_id IN (SELECT value FROM json_each(%s)))",
                [json.dumps(self.moment.retired), json.dumps(self.moment.revived)])

    def read_inactive(self, cursor) -> None:
        """Read once (``records_scope_idx`` alone), so that no statement scans the index for them again."""
        cursor.execute(f"SELECT scope_kind, scope_key, rowid FROM {self.db}.records WHERE status_kind <> 'active'")
        rows = set(cursor.fetchall())
        if self.moment is not None:
            rows = (rows - set(self._named(cursor, self.moment.revived))) | set(self._named(cursor, self.moment.retired))
        for kind, key, rowid in sorted(rows):
            self.inactive.setdefault((kind, key), []).append(rowid)

    def _named(self, cursor, memory_ids: list[str]) -> list[tuple[str, str, int]]:
        cursor.execute(f"SELECT scope_kind, scope_key, rowid FROM {self.db}.records"
                       " WHERE memory_id IN (SELECT value FROM json_each(%s))", [json.dumps(memory_ids)])
        return cursor.fetchall()

    def indexed_active(self, first: Scope, last: Scope | None) -> tuple[str, list]:
        """``active`` answered from the indexes alone, for records of the scopes ``first`` to ``last``."""
        rowids = [rowid for scope, ids in self.inactive.items()
                  if first <= scope and (last is None or scope <= last) for rowid in ids]
        return "r.rowid NOT IN (SELECT value FROM json_each(%s))", [json.dumps(rowids)]


def _classify(cursor, mine: _Side, theirs: _Side) -> dict[Scope, _ScopeDifferences]:
    """Each scope's differences, from SQLite's answers on the attached pair."""
    sizes: Counter[Scope] = Counter()
    active_now: dict[Scope, int] = {}
    for side in (mine, theirs):
        cursor.execute(f"SELECT scope_kind, scope_key, COUNT(*), SUM(status_kind = 'active') FROM {side.db}.records"
                       " GROUP BY scope_kind, scope_key")
        for kind, key, count, active in cursor.fetchall():
            sizes[(kind, key)] += count
            if side is mine:
                active_now[(kind, key)] = active
        side.read_inactive(cursor)
    records = active_now if mine.moment is None else mine.moment.records
    hashes: dict[str, list[Bound]] = {mine.db: [], theirs.db: []}
    for chunk in _chunks(sizes):
        for one, other in ((mine, theirs), (theirs, mine)):
            hashes[one.db] += _unmatched(cursor, one, other, *chunk)
            if len(hashes[one.db]) > MAX_UNMATCHED:
                raise InvalidParams(f"the realms differ in more than {MAX_UNMATCHED:,} active records:"
                                    " they are not copies of one another, so they are not compared by key")
    unmatched = {side.db: _by_hash(cursor, side, hashes[side.db]) for side in (mine, theirs)}
    keys = {row[:3] for rows in unmatched.values() for row in rows}
    # Under a key several records share, the newest is compared, and it may be one with a twin.
    # So every record of ``realm`` under these keys is read (a scan, for the titles); those of
    # ``against`` are its unmatched ones and the twins of ``realm``'s, found by their hashes.
    under = _under(cursor, mine, keys) if keys else []
    twins = unmatched[theirs.db] + _by_hash(cursor, theirs, sorted({row[:2] + row[3:4] for row in under}))
    newest_mine, newest_theirs = _newest(under, keys), _newest(twins, keys)
    under_keys = Counter(row[:2] for row in under if row[:3] in keys)
    # A record of ``realm`` under no such key has its twin, and so is a key alike in both.
    differences = {scope: _ScopeDifferences(count - under_keys[scope]) for scope, count in records.items() if count}
    for key in sorted(keys):
        found = differences.setdefault(key[:2], _ScopeDifferences())
        mine_newest, theirs_newest = newest_mine.get(key), newest_theirs.get(key)
        if mine_newest is not None and theirs_newest is not None and mine_newest.content_hash == theirs_newest.content_hash:
            found.alike += 1
            continue
        name = "differing" if mine_newest and theirs_newest else "only_in_realm" if mine_newest else "only_in_against"
        found.lists[name].append(Difference(key, mine_newest, theirs_newest))
    return differences


def _chunks(sizes: Counter[Scope]) -> list[tuple[Bound, Bound | None]]:
    """[from, to) ranges of (scope kind, scope key, hash) of about ``CHUNK_RECORDS`` records each:
    small scopes together, a large one cut by its hashes' first byte (SHA-256 spreads them evenly)."""
    starts: list[tuple[Bound, int]] = []
    for scope in sorted(sizes):
        parts = min(256, -(-sizes[scope] // CHUNK_RECORDS))
        starts += [((*scope, f"{256 * part // parts:02x}" if part else ""), sizes[scope] // parts) for part in range(parts)]
    bounds: list[Bound] = []
    filled = CHUNK_RECORDS
    for start, size in starts:
        if filled + size > CHUNK_RECORDS:
            bounds.append(start)
            filled = 0
        filled += size
    return list(zip(bounds, [*bounds[1:], None]))


def _unmatched(cursor, one: _Side, other: _Side, lo: Bound, hi: Bound | None) -> list[Bound]:
    """(scope kind, scope key, hash) of ``one``'s active records in [lo, hi) with no active twin in ``other``."""
    in_range = "(r.scope_kind, r.scope_key, r.content_hash) >= (%s, %s, %s)"
    if hi is not None:
        in_range += " AND (r.scope_kind, r.scope_key, r.content_hash) < (%s, %s, %s)"
    sides = []
    for side in (one, other):
        where, args = side.indexed_active(lo[:2], hi[:2] if hi else None)
        sides.append((f"SELECT r.scope_kind, r.scope_key, r.content_hash FROM {side.db}.records AS r"
                      f" WHERE {in_range} AND {where}", [*lo, *(hi or ()), *args]))
    # ORDER BY on the index's own columns makes SQLite merge the two index ranges (MERGE (EXCEPT))
    # instead of building a temporary b-tree of one of them.
    cursor.execute(f"{sides[0][0]} EXCEPT {sides[1][0]} ORDER BY 1, 2, 3 LIMIT {MAX_UNMATCHED + 1}",
                   [*sides[0][1], *sides[1][1]])
    return cursor.fetchall()


def _by_hash(cursor, side: _Side, hashes: list[Bound]) -> list[_Row]:
    """The active records of ``side`` with these (scope kind, scope key, hash), by the hash index."""
    where, args = side.active()
    rows: list[_Row] = []
    for start in range(0, len(hashes), _LOOKUPS):
        cursor.execute(
            f"SELECT {_ROW} FROM json_each(%s) AS j CROSS JOIN {side.db}.records AS r WHERE r.scope_kind = j.value->>0"
            f" AND r.scope_key = j.value->>1 AND r.content_hash = j.value->>2 AND {where}",
            [json.dumps(hashes[start : start + _LOOKUPS]), *args])
        rows += cursor.fetchall()
    return rows


def _under(cursor, side: _Side, keys: set[LogicalKey]) -> list[_Row]:
    """The active records of ``side`` with these keys' titles (in any scope: there is no title
    index), read a range of rowids at a time."""
    where, args = side.active()
    titles = json.dumps(sorted({key[2] for key in keys}))
    cursor.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {side.db}.records")
    last = cursor.fetchone()[0]
    rows: list[_Row] = []
    for start in range(0, last, CHUNK_RECORDS):
        cursor.execute(f"SELECT {_ROW} FROM {side.db}.records AS r WHERE r.rowid > %s AND r.rowid <= %s"
                       f" AND r.title IN (SELECT value FROM json_each(%s)) AND {where}",
                       [start, start + CHUNK_RECORDS, titles, *args])
        rows += cursor.fetchall()
    return rows


def _newest(rows: list[_Row], keys: set[LogicalKey]) -> dict[LogicalKey, Keyed]:
    newest: dict[LogicalKey, Keyed] = {}
    for kind, scope_key, title, digest, updated_at_ms, memory_id in rows:
        key = (kind, scope_key, title)
        kept = newest.get(key)
        if key in keys and (kept is None or (updated_at_ms, memory_id) > (kept.updated_at_ms, kept.memory_id)):
            newest[key] = Keyed(memory_id, digest, updated_at_ms)
    return newest


def _moment(realm: str, at_ms: int) -> _Moment:
    """The realm at ``at_ms`` from its history file: the counts kept per moment, and the spans of
    the records changed since (only those can stand otherwise then than now)."""
    with realm_history(realm) as history:
        touched = sorted({span.memory_id for span in history.changes_between(at_ms, SQLITE_INT_MAX)})
        spans = history.spans_of(touched)
        records: Counter[Scope] = Counter()
        for group in history.groups_at(at_ms):
            if group.status == "active":
                records[(group.scope_kind, group.scope_key)] += group.records
    revived, retired = [], []
    for memory_id, own in spans.items():
        then = any(span.status == "active" and span.from_ms <= at_ms and (span.to_ms is None or span.to_ms > at_ms)
                   for span in own)
        now = own[-1].to_ms is None and own[-1].status == "active"
        if then and not now:
            revived.append(memory_id)
        elif now and not then:
            retired.append(memory_id)
    return _Moment(dict(records), revived, retired)
