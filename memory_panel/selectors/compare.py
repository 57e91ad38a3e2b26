"""Two realms compared by logical key: records matched by scope and title (docs/history.md §6).

A record's logical key is its scope (kind and key) and title: the same note written in two realms
(a staging copy, a replica restored elsewhere) has two ids but one key. Only active records are
compared, as they stand now or, with a moment, as they stood then (the realm's history file), and
only those the caller may see in each realm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_panel.errors import InvalidParams, UnknownRealm
from memory_panel.models import Record
from memory_panel.store.history_file import realm_history
from memory_panel.store.realms import realm_alias
from memory_panel.store.rows import realm_read
from memory_panel.visibility import row_checker

if TYPE_CHECKING:
    from access.caller import Access

LogicalKey = tuple[str, str, str]  # (scope_kind, scope_key, title)


@dataclass(frozen=True, slots=True)
class Keyed:
    """One realm's active record under a logical key (the newest, when several share it)."""

    memory_id: str
    kind: str
    body: str
    updated_at_ms: int


@dataclass(frozen=True)
class RealmComparison:
    """Logical keys in one realm only, in the other only, in both with another body, and in both alike."""

    realm: str
    against: str
    only_in_realm: list[tuple[LogicalKey, Keyed]]
    only_in_against: list[tuple[LogicalKey, Keyed]]
    differing: list[tuple[LogicalKey, Keyed, Keyed]]
    alike: int


def compare_realms(*, access: Access, realm: str, against: str, at_ms: int | None = None,
                   limit: int) -> RealmComparison:
    """``realm`` against ``against`` by logical key; each list sorted by key, at most ``limit`` long."""
    if realm == against:
        raise InvalidParams("against must name another realm than realm")
    mine, theirs = _keyed(access, realm, at_ms), _keyed(access, against, at_ms)
    only_mine = sorted((key, row) for key, row in mine.items() if key not in theirs)
    only_theirs = sorted((key, row) for key, row in theirs.items() if key not in mine)
    both = sorted(key for key in mine if key in theirs)
    differing = [(key, mine[key], theirs[key]) for key in both if mine[key].body != theirs[key].body]
    return RealmComparison(realm, against, only_mine[:limit], only_theirs[:limit], differing[:limit],
                           len(both) - len(differing))


def _keyed(access: Access, realm: str, at_ms: int | None) -> dict[LogicalKey, Keyed]:
    try:
        alias = realm_alias(realm)
    except UnknownRealm as error:
        raise InvalidParams(str(error)) from error
    visible = row_checker(access) if access.enforced else None
    out: dict[LogicalKey, Keyed] = {}
    with realm_read(realm, alone=True):
        rows = Record.objects.using(alias).values_list(
            "memory_id", "scope_kind", "scope_key", "title", "kind", "body", "updated_at_ms")
        if at_ms is None:
            rows = rows.filter(status_kind="active")
            active_then = None
        else:
            with realm_history(realm) as history:
                active_then = {span.memory_id for span in history.standing_at(at_ms, status="active")}
        for memory_id, scope_kind, scope_key, title, kind, body, updated_at_ms in rows.iterator(chunk_size=5000):
            if active_then is not None and memory_id not in active_then:
                continue
            if visible is not None and not visible(scope_kind, scope_key, "active", False):
                continue
            key = (scope_kind, scope_key, title)
            kept = out.get(key)
            if kept is None or (updated_at_ms, memory_id) > (kept.updated_at_ms, kept.memory_id):
                out[key] = Keyed(memory_id, kind, body, updated_at_ms)
    return out
