"""Holdings: per-scope record counts and floor pressure (docs/store-format.md §5.6)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from memory_panel.store.realm_index import realm_index
from memory_panel.store.realm_memo import realm_memo
from memory_panel.store.records import SCOPE_ORDER
from memory_panel.store.request_memo import once_per_request
from memory_panel.store.rows import realm_cursor, realm_rows
from memory_panel.visibility import require_realm_history, scope_visible, sees_quarantined
from memory_panel.wire.params import FLOOR_BYTES, FLOOR_RECORDS

if TYPE_CHECKING:
    from access.caller import Access


@dataclass(frozen=True)
class ScopeHoldings:
    realm: str
    scope_kind: str
    scope_key: str
    active: int
    quarantined: int
    superseded: int
    tombstoned: int
    body_bytes: int
    floor_pressure: bool

    @property
    def floor_fraction(self) -> float:
        """How close the scope is to its floor (FLOOR_RECORDS active or FLOOR_BYTES of bodies), 0..1."""
        return min(max(self.active / FLOOR_RECORDS, self.body_bytes / FLOOR_BYTES), 1.0)

    @property
    def records(self) -> int:
        return self.active + self.quarantined + self.superseded + self.tombstoned


# docs/ui.md §4: a realm's Holdings table shows at most this many scopes at a time.
SCOPES_SHOWN = 100
NEAR_FLOOR = 0.9


# docs/ui.md §4: beyond this many realms, Holdings across realms is one table of every realm's
# scopes, those that matter first, rather than a table per realm (500 tables would be megabytes).
REALM_TABLES_MAX = 12


@dataclass(frozen=True)
class ScopeTable:
    """One Holdings table: the scopes shown, and how many there are in all.

    ``realm`` is None for the one table across realms (``REALM_TABLES_MAX``).
    """

    realm: str | None
    scopes: list[ScopeHoldings]
    total: int  # scopes of the realm the caller may see
    matched: int  # of those, scopes the filter kept
    offset: int
    next_offset: int | None

    @property
    def shown_to(self) -> int:
        return self.offset + len(self.scopes)


def holdings_tables(
    *, scopes: list[ScopeHoldings], realms: list[str], contains: str, offset: int
) -> list[ScopeTable]:
    """One table per realm, every realm listed (an empty realm shows as empty, not missing); one
    table across them all when there are more than ``REALM_TABLES_MAX``."""
    if len(realms) > REALM_TABLES_MAX:
        return [scope_table(realm=None, scopes=scopes, contains=contains, offset=offset, limit=SCOPES_SHOWN)]
    return [scope_table(realm=name, scopes=scopes, contains=contains, offset=offset, limit=SCOPES_SHOWN) for name in realms]


def scope_table(
    *, realm: str | None, scopes: list[ScopeHoldings], contains: str, offset: int, limit: int
) -> ScopeTable:
    """The scopes of one realm's table (of every realm's: None), those that matter first when there
    are more than ``limit``.

    docs/ui.md §4: up to ``limit`` scopes, all in MobKit's scope order. Beyond that, the scopes at
    or near the floor (closest first), then those holding quarantined records (most first), then
    the largest; ``contains`` keeps the scopes whose key holds that text; ``offset`` pages.
    """
    held = scopes if realm is None else [s for s in scopes if s.realm == realm]
    wanted = contains.strip().casefold()
    matched = [s for s in held if wanted in str(s.scope_key).casefold()] if wanted else held
    if len(held) > limit or wanted:
        matched = sorted(matched, key=_mattering)
    shown = matched[offset : offset + limit]
    more = offset + limit < len(matched)
    return ScopeTable(realm, shown, len(held), len(matched), offset, offset + limit if more else None)


def _mattering(scope: ScopeHoldings) -> tuple:
    near = scope.floor_fraction >= NEAR_FLOOR
    tier = 0 if near else 1 if scope.quarantined else 2
    weight = -scope.floor_fraction if near else -scope.quarantined if scope.quarantined else -scope.records
    return (tier, weight, -scope.records, SCOPE_ORDER.get(scope.scope_kind, len(SCOPE_ORDER)), str(scope.scope_key))


def scope_holdings(*, access: Access, realm: str | None) -> tuple[list[ScopeHoldings], list[str]]:
    """Per-scope counts, only for scopes the caller may read, in MobKit's scope order.

    docs/access.md §2.8: a caller who may not review counts as if quarantined rows did not exist
    (no count, no bytes, no scope that holds nothing else), as its listings leave them out.
    """
    require_realm_history(access)
    counted = partial(realm_holdings, with_quarantined=sees_quarantined(access))
    held, realms = realm_rows(realm, lambda name: list(counted(name)))
    scopes = [s for s in held if scope_visible(access, s.scope_kind, s.scope_key)]
    scopes.sort(key=lambda s: (SCOPE_ORDER.get(s.scope_kind, len(SCOPE_ORDER)), s.realm, s.scope_key))
    return scopes, realms


def realm_holdings(realm: str, *, with_quarantined: bool) -> list[ScopeHoldings]:
    """Every scope of the realm with its counts; worked out once per request (Holdings' table and
    its tiles both read it, and a realm may hold thousands of scopes)."""
    key = ("realm_holdings", realm, with_quarantined)
    counted = partial(_counted_holdings, realm, with_quarantined=with_quarantined)
    return once_per_request(key, lambda: realm_memo(realm, key, lambda: list(counted())))


def _counted_holdings(realm: str, *, with_quarantined: bool) -> Iterator[ScopeHoldings]:
    counts: dict[tuple[str, str], dict[str, int]] = {}
    index = realm_index(realm)
    if index is not None:
        rows = index.holdings()  # kept current from the audit feed: no GROUP BY per page view
    else:
        rows = realm_cursor(realm).execute(
            "SELECT scope_kind, scope_key, status_kind, COUNT(*), COALESCE(SUM(LENGTH(body)), 0)"
            " FROM records GROUP BY 1, 2, 3"
        ).fetchall()
    for scope_kind, scope_key, status, count, body_chars in rows:
        if status == "quarantined" and not with_quarantined:
            continue
        bucket = counts.setdefault((scope_kind, scope_key), {"body_bytes": 0})
        # docs/store-format.md §5.6: an unknown status reads as active; body_bytes is SQLite LENGTH (characters).
        key = status if status in ("active", "quarantined", "superseded", "tombstoned") else "active"
        bucket[key] = bucket.get(key, 0) + count
        bucket["body_bytes"] += body_chars
    for (scope_kind, scope_key), bucket in counts.items():
        active = bucket.get("active", 0)
        yield ScopeHoldings(
            realm=realm,
            scope_kind=scope_kind,
            scope_key=scope_key,
            active=active,
            quarantined=bucket.get("quarantined", 0),
            superseded=bucket.get("superseded", 0),
            tombstoned=bucket.get("tombstoned", 0),
            body_bytes=bucket["body_bytes"],
            floor_pressure=active >= FLOOR_RECORDS or bucket["body_bytes"] >= FLOOR_BYTES,
        )
