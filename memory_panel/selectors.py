"""Panel queries: plain arguments in, plain data out, the caller's Access always applied.

The JSON-RPC methods and the HTML views both call these, so ordering, cursor and visibility rules
have one implementation (spec memory-store §5, console-panel-and-access §1–§2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from django.db import connections
from django.db.models import BinaryField, Q
from django.db.models.functions import Cast, Length

from memory_panel.models import (
    Audit,
    DreamAuditVerdict,
    DreamRun,
    Injection,
    PendingHarvest,
    PendingPromotion,
    Proposal,
    Record,
)
from memory_panel.realm_index import IndexQuery, RealmIndex, realm_index
from memory_panel.realms import UnknownRealm, realm_alias, realm_names, store_format
from memory_panel.records import (
    LIST_COLUMNS,
    RECORD_COLUMNS,
    SCOPE_ORDER,
    MemoryRecord,
    decode_record,
    parse_json_text,
)
from memory_panel.visibility import (
    REVIEW,
    can_read_realm_history,
    record_denial_action,
    record_visible,
    scope_visible,
)
from memory_panel.wire import (
    CHAIN_MAX,
    FLOOR_BYTES,
    FLOOR_RECORDS,
    INJECTIONS_PER_RECORD,
    Cursor,
    RecordFilter,
    unknown_record,
)
from mobkit_console.rpc.errors import access_denied

if TYPE_CHECKING:
    from mobkit_console.access.caller import Access

DREAM_AUDIT_SCAN = 5000  # spec memory-store §5.4
DREAM_MEMORY_IDS = 12
DREAM_RATIONALES = 6
# Rows read per round trip while filling a page with rows the caller may see.
FILL_BATCH_MIN = 64
# Most index keys read in one round trip while scope grants hide most of them.
INDEX_BATCH_MAX = 4096


# ---------------------------------------------------------------------------------------------
# Records


@dataclass(frozen=True)
class RecordPage:
    records: list[MemoryRecord]
    next_cursor: Cursor | None
    realms: list[str]


def panel_realms(realm: str | None) -> list[str]:
    """The realms a read spans: the one asked for, else every realm with a store file."""
    return [realm] if realm is not None else realm_names()


def record_list(
    *,
    access: Access,
    realm: str | None,
    filters: RecordFilter,
    limit: int,
    cursor: Cursor | None,
) -> RecordPage:
    """One keyset page, newest first, holding only rows the caller may see.

    Two deliberate improvements over MobKit with the same wire format: hidden rows never consume
    the page (each realm is read until it yields ``limit + 1`` visible rows), and the cursor
    pages through several realms merged in (updated_at_ms, id) order.
    """
    _record_list_gate(access, filters)
    realms = panel_realms(realm)
    rows: list[MemoryRecord] = []
    for name in realms:
        rows.extend(_visible_rows(access, name, filters, cursor, limit + 1))
    rows.sort(key=lambda r: (r.updated_at_ms, r.id), reverse=True)
    page = rows[:limit]
    next_cursor = Cursor(page[-1].updated_at_ms, page[-1].id) if len(rows) > limit else None
    return RecordPage(page, next_cursor, realms)


def _record_list_gate(access: Access, filters: RecordFilter) -> None:
    """spec console-panel-and-access §1.2 (a): entry gates before any row is read."""
    if not access.enforced:
        return
    if filters.scope_kind == "mob" and not access.allows("mob.memory.read"):
        raise access_denied("mob.memory.read", None)
    if filters.scope_kind == "operator" and not access.allows("operator.memory.read"):
        raise access_denied("operator.memory.read", None)
    if filters.scope_kind == "identity" and filters.scope_key is not None:
        for action in ("agent.memory.read", "agent.view"):
            if not access.allows(action, filters.scope_key):
                raise access_denied(action, filters.scope_key)


def _visible_rows(
    access: Access,
    realm: str,
    filters: RecordFilter,
    cursor: Cursor | None,
    want: int,
) -> list[MemoryRecord]:
    """Up to ``want`` visible rows of one realm after ``cursor``, reading on past hidden rows."""
    try:
        alias = realm_alias(realm)
    except UnknownRealm:
        return []  # the file went away since discovery: nothing to show for it
    hidden_kinds = _hidden_scope_kinds(access)
    hide_quarantined = access.enforced and not access.allows(REVIEW)
    index = realm_index(realm)
    if index is not None:
        query = IndexQuery(
            **_equality_filters(filters), hidden_scope_kinds=hidden_kinds, hide_quarantined=hide_quarantined
        )
        scope_ok = _scope_check(access)
        scopes = _few_readable_scopes(index, query, scope_ok)
        next_chunk = partial(_index_chunk, index, alias, realm, query, scopes, scope_ok)
    else:
        queryset = _list_rows(alias, realm).filter(**_equality_filters(filters))
        if hide_quarantined:
            queryset = queryset.exclude(status_kind="quarantined")
        next_chunk = partial(_direct_chunk, queryset.exclude(scope_kind__in=hidden_kinds), realm)
    # Hidden rows make a direct read overshoot; index chunks already hold only readable scopes.
    batch = max(want, FILL_BATCH_MIN) if access.enforced and index is None else want
    visible: list[MemoryRecord] = []
    position = cursor
    while len(visible) < want:
        chunk, position = next_chunk(position, batch)
        for record in chunk:
            if record_visible(access, record):
                visible.append(record)
                if len(visible) == want:
                    break
        if position is None:
            break
    return visible


def _direct_chunk(queryset, realm: str, after: Cursor | None, size: int) -> tuple[list[MemoryRecord], Cursor | None]:
    """The next rows straight from the realm file, and where the following chunk starts (None: end)."""
    rows = list(_after(queryset, after).order_by("-updated_at_ms", "-memory_id")[:size])
    records = [decode_record(realm, row) for row in rows]
    more = len(rows) == size
    return records, Cursor(records[-1].updated_at_ms, records[-1].id) if more else None


def _index_chunk(
    index: RealmIndex,
    alias: str,
    realm: str,
    query: IndexQuery,
    scopes: list[tuple[str, str]] | None,
    scope_ok: Callable[[str, str], bool],
    after: Cursor | None,
    size: int,
) -> tuple[list[MemoryRecord], Cursor | None]:
    """The next rows whose scope the caller may read: keys from the index, rows from the realm file.

    The index knows each entry's scope, so rows of scopes the caller may not read are skipped
    before any row is read from the realm (a reader granted one agent of many would otherwise
    decode a screenful of other agents' rows per visible one). The key batch doubles while
    scopes hide most of it.
    """
    ids: list[str] = []
    position = after
    batch = size
    while True:
        key = (position.updated_at_ms, position.memory_id) if position else None
        if scopes is not None:
            entries = index.page_entries_in_scopes(query, scopes, key, batch)
        else:
            entries = index.page_entries(query, key, batch)
        for updated_at_ms, memory_id, scope_kind, scope_key in entries:
            if scope_ok(scope_kind, scope_key):
                ids.append(memory_id)
                if len(ids) == size:  # stop at this entry: the next chunk starts right after it
                    return _records_by_id(alias, realm, ids), Cursor(updated_at_ms, memory_id)
        if len(entries) < batch:
            return _records_by_id(alias, realm, ids), None
        position = Cursor(*entries[-1][:2])
        batch = min(batch * 2, INDEX_BATCH_MAX)


# Up to this many readable scopes, a page seeks each scope's run of the index and merges them.
FEW_SCOPES = 64


def _few_readable_scopes(
    index: RealmIndex, query: IndexQuery, scope_ok: Callable[[str, str], bool]
) -> list[tuple[str, str]] | None:
    """The scopes to seek one by one when the caller may read only a few of several; else None."""
    if query.scope_kind is not None and query.scope_key is not None:
        return None  # already one scope
    candidates = [
        (kind, key)
        for kind, key in index.scopes()
        if query.scope_kind in (None, kind) and kind not in query.hidden_scope_kinds
    ]
    readable = [scope for scope in candidates if scope_ok(*scope)]
    return readable if len(readable) < len(candidates) and len(readable) <= FEW_SCOPES else None


def _scope_check(access: Access) -> Callable[[str, str], bool]:
    """``scope_visible`` for this caller, each distinct scope evaluated once per request."""
    if not access.enforced:
        return lambda scope_kind, scope_key: True
    return cache(partial(scope_visible, access))


def _records_by_id(alias: str, realm: str, ids: list[str]) -> list[MemoryRecord]:
    """List rows for ``ids``, in that order (ids the realm no longer holds are skipped).

    Every page served from the index comes through here, so it is one plain statement on the
    alias's connection (same columns as ``_list_rows``): building the queryset cost more than
    running the primary-key lookups it makes.
    """
    if not ids:
        return []
    columns = (*_record_columns(realm, LIST_COLUMNS), "body_bytes")
    sql = (
        f"SELECT {', '.join(columns[:-1])}, LENGTH(CAST(body AS BLOB)) FROM records"
        f" WHERE memory_id IN ({', '.join(['%s'] * len(ids))})"
    )
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, ids)
        rows = {row[0]: dict(zip(columns, row)) for row in cursor.fetchall()}
    return [decode_record(realm, rows[memory_id]) for memory_id in ids if memory_id in rows]


def _equality_filters(filters: RecordFilter) -> dict[str, str]:
    wanted = {
        "scope_kind": filters.scope_kind,
        "scope_key": filters.scope_key,
        "status_kind": filters.status,
        "kind": filters.kind,
        "trust": filters.trust,
    }
    return {column: value for column, value in wanted.items() if value is not None}


def _hidden_scope_kinds(access: Access) -> tuple[str, ...]:
    """Scope kinds no grant of this caller could reveal, excluded before rows are read."""
    if not access.enforced:
        return ()
    resource_less = (("mob", "mob.memory.read"), ("operator", "operator.memory.read"), ("realm", "agent.memory.read"))
    return tuple(kind for kind, action in resource_less if not access.allows(action))


def _after(queryset, cursor: Cursor | None):
    if cursor is None:
        return queryset
    return queryset.filter(
        Q(updated_at_ms__lt=cursor.updated_at_ms)
        | Q(updated_at_ms=cursor.updated_at_ms, memory_id__lt=cursor.memory_id)
    )


def _record_columns(realm: str, base: tuple[str, ...]) -> tuple[str, ...]:
    # Older files have no ever_quarantined column; decode_record reads its absence as 0.
    return base + ("ever_quarantined",) if store_format(realm).has_ever_quarantined else base


def _list_rows(alias: str, realm: str):
    """Body-free rows with ``body_bytes`` measured in UTF-8 bytes, as MobKit's list rows are."""
    return (
        Record.objects.using(alias)
        .annotate(body_bytes=Length(Cast("body", BinaryField())))
        .values(*_record_columns(realm, LIST_COLUMNS), "body_bytes")
    )


def _full_rows(alias: str, realm: str):
    return Record.objects.using(alias).values(*_record_columns(realm, RECORD_COLUMNS))


# ---------------------------------------------------------------------------------------------
# One record: biography


@dataclass(frozen=True)
class InjectionRow:
    realm: str
    record_id: str
    identity: str
    session_key: str | None
    surface: str
    at_ms: int


@dataclass(frozen=True)
class RecordBiography:
    realm: str
    record: MemoryRecord
    chain: list[MemoryRecord]
    injections: list[InjectionRow]


def record_get(*, access: Access, memory_id: str, realm: str | None) -> RecordBiography:
    """The first realm holding ``memory_id`` wins; visibility is checked once the scope is known."""
    for name in panel_realms(realm):
        try:
            alias = realm_alias(name)
        except UnknownRealm:
            continue
        row = _full_rows(alias, name).filter(memory_id=memory_id).first()
        if row is None:
            continue
        record = decode_record(name, row)
        if not record_visible(access, record):
            raise access_denied(record_denial_action(access, record), record.id)
        chain = [link for link in supersede_chain(realm=name, memory_id=memory_id) if record_visible(access, link)]
        return RecordBiography(name, record, chain, _record_injections(alias, name, memory_id))
    raise unknown_record(memory_id)


def supersede_chain(*, realm: str, memory_id: str, max_len: int = CHAIN_MAX) -> list[MemoryRecord]:
    """Oldest-first lineage through ``memory_id`` (spec memory-store §5.2), body-free, unfiltered."""
    alias = realm_alias(realm)
    rows = _list_rows(alias, realm)

    def load(record_id: str) -> MemoryRecord | None:
        row = rows.filter(memory_id=record_id).first()
        return decode_record(realm, row) if row else None

    start = load(memory_id)
    if start is None:
        return []
    seen = {start.id}
    ancestors: list[MemoryRecord] = []
    node = start
    while node.supersedes and len(ancestors) + 1 < max_len:
        prior = load(node.supersedes)
        if prior is None or prior.id in seen:
            break
        seen.add(prior.id)
        ancestors.append(prior)
        node = prior
    chain = [*reversed(ancestors), start]
    tip = start
    while tip.status == "superseded" and tip.status_detail and len(chain) < max_len:
        successor = load(tip.status_detail)
        if successor is None or successor.id in seen:
            break
        seen.add(successor.id)
        chain.append(successor)
        tip = successor
    # Uncommitted claimants: rows pointing at the tip that the tip does not name as its successor.
    index = realm_index(realm)
    if index is not None:
        claimants = _records_by_id(alias, realm, index.claimant_ids(tip.id))
    else:
        claimants = [decode_record(realm, row) for row in rows.filter(supersedes=tip.id).order_by("created_at_ms", "memory_id")]
    chain += [c for c in claimants if c.id not in seen][: max(0, max_len - len(chain))]
    return chain


def _record_injections(alias: str, realm: str, memory_id: str) -> list[InjectionRow]:
    rows = (
        Injection.objects.using(alias)
        .filter(record_id=memory_id)
        .order_by("-at_ms", "-injection_id")
        .values("record_id", "identity", "session_key", "surface", "at_ms")[:INJECTIONS_PER_RECORD]
    )
    return [InjectionRow(realm=realm, **row) for row in rows]


def claimant_ids(chain: list[MemoryRecord]) -> set[str]:
    """Chain members whose prior was not marked superseded by them: uncommitted claimants."""
    by_id = {link.id: link for link in chain}
    return {
        link.id
        for link in chain
        if link.supersedes
        and (prior := by_id.get(link.supersedes)) is not None
        and not (prior.status == "superseded" and prior.status_detail == link.id)
    }


def list_claimant_ids(*, records: list[MemoryRecord]) -> set[str]:
    """List rows that are uncommitted claimants (as ``claimant_ids``), reading each prior once.

    A list row does not carry its prior's status, so the priors are fetched in one query per realm.
    """
    priors_by_realm: dict[str, set[str]] = {}
    for record in records:
        if record.supersedes:
            priors_by_realm.setdefault(record.realm, set()).add(record.supersedes)
    committed: dict[tuple[str, str], str | None] = {}
    for realm, prior_ids in priors_by_realm.items():
        rows = (
            Record.objects.using(realm_alias(realm))
            .filter(memory_id__in=prior_ids)
            .values_list("memory_id", "status_kind", "status_detail")
        )
        for memory_id, status, detail in rows:
            committed[(realm, memory_id)] = detail if status == "superseded" else None
    return {
        record.id
        for record in records
        if record.supersedes
        and (record.realm, record.supersedes) in committed
        and committed[(record.realm, record.supersedes)] != record.id
    }


# ---------------------------------------------------------------------------------------------
# Quarantine queue


@dataclass(frozen=True)
class PendingPromotionRow:
    realm: str
    pending_id: str
    record_id: str
    scope_kind: str
    scope_key: str
    rationale: str | None
    status: str
    created_at_ms: int


@dataclass(frozen=True)
class QuarantineQueue:
    records: list[MemoryRecord]
    pending_promotions: list[PendingPromotionRow]
    realms: list[str]


def quarantine_queue(*, access: Access, realm: str | None, limit: int) -> QuarantineQueue:
    if access.enforced and not access.allows(REVIEW):
        raise access_denied(REVIEW, None)
    realms = panel_realms(realm)
    records: list[MemoryRecord] = []
    promotions: list[PendingPromotionRow] = []
    for name in realms:
        try:
            alias = realm_alias(name)
        except UnknownRealm:
            continue
        # The review grant is necessary, not sufficient: each row still needs its scope's read grant.
        records.extend(_visible_quarantined(access, alias, name, limit))
        promotions.extend(
            PendingPromotionRow(realm=name, **row)
            for row in PendingPromotion.objects.using(alias)
            .filter(status="pending")
            .order_by("created_at_ms", "pending_id")
            .values("pending_id", "record_id", "scope_kind", "scope_key", "rationale", "status", "created_at_ms")
            if scope_visible(access, row["scope_kind"], row["scope_key"])
        )
    records.sort(key=lambda r: (r.created_at_ms, r.id), reverse=True)
    return QuarantineQueue(records[:limit], promotions, realms)


def _visible_quarantined(access: Access, alias: str, realm: str, limit: int) -> list[MemoryRecord]:
    """The newest quarantined rows the caller may see, up to ``limit``, read on past hidden ones."""
    hidden_kinds = _hidden_scope_kinds(access)
    index = realm_index(realm)
    queryset = (
        _list_rows(alias, realm)
        .filter(status_kind="quarantined")
        .exclude(scope_kind__in=hidden_kinds)
        .order_by("-created_at_ms", "-memory_id")
    )
    batch = max(limit, FILL_BATCH_MIN)
    taken: list[MemoryRecord] = []
    offset = 0
    while len(taken) < limit:
        if index is not None:
            ids = index.quarantined_ids(hidden_scope_kinds=hidden_kinds, offset=offset, limit=batch)
            chunk, read = _records_by_id(alias, realm, ids), len(ids)
        else:
            chunk = [decode_record(realm, row) for row in queryset[offset : offset + batch]]
            read = len(chunk)
        taken += [record for record in chunk if record_visible(access, record)]
        if read < batch:
            break
        offset += batch
    return taken[:limit]


# ---------------------------------------------------------------------------------------------
# Steward dreams, rebuilt from the audit table


@dataclass
class DreamSummary:
    realm: str
    run_id: str
    first_op_at_ms: int
    last_op_at_ms: int
    ops: int = 0
    op_kinds: dict[str, int] = field(default_factory=dict)
    quarantined_ops: int = 0
    memory_ids: list[str] = field(default_factory=list)
    rationales: list[str] = field(default_factory=list)


def _require_realm_history(access: Access) -> None:
    if not can_read_realm_history(access):
        raise access_denied("agent.memory.read", None)


def dream_history(*, access: Access, realm: str | None, limit: int) -> tuple[list[DreamSummary], list[str]]:
    """Steward runs grouped by run_id from the newest 5,000 audit rows per realm (spec §5.4)."""
    _require_realm_history(access)
    realms = panel_realms(realm)
    runs: list[DreamSummary] = []
    for name in realms:
        runs.extend(_realm_dreams(name, limit))
    runs.sort(key=lambda run: run.last_op_at_ms, reverse=True)
    return runs[:limit], realms


def _realm_dreams(realm: str, limit: int) -> list[DreamSummary]:
    rows = (
        Audit.objects.using(realm_alias(realm))
        # MobKit orders by (applied_at_ms, audit_id), which no index covers. audit_id is assigned in
        # commit order under the write lock, so it is the same order unless the clock stepped back,
        # and it reads the newest rows through the primary key instead of sorting the whole table.
        .order_by("-audit_id")
        .values_list("op_kind", "memory_id", "detail", "applied_at_ms")[:DREAM_AUDIT_SCAN]
    )
    runs: dict[str, DreamSummary] = {}
    for op_kind, memory_id, detail_text, applied_at_ms in rows:
        run_id = _steward_run_id(detail := parse_json_text(detail_text))
        if run_id is None:
            continue
        run = runs.get(run_id)
        if run is None:
            if len(runs) >= limit:
                continue  # rows of runs already seen still count; new runs are skipped
            run = runs[run_id] = DreamSummary(realm, run_id, applied_at_ms, applied_at_ms)
        _fold_audit_row(run, op_kind, memory_id, detail, applied_at_ms)
    for run in runs.values():
        run.op_kinds = dict(sorted(run.op_kinds.items()))
    return list(runs.values())


def _fold_audit_row(run: DreamSummary, op_kind: str, memory_id: str | None, detail: dict, applied_at_ms: int) -> None:
    run.ops += 1
    run.first_op_at_ms = min(run.first_op_at_ms, applied_at_ms)
    run.last_op_at_ms = max(run.last_op_at_ms, applied_at_ms)
    run.op_kinds[op_kind] = run.op_kinds.get(op_kind, 0) + 1
    if detail.get("quarantined") is not None:
        run.quarantined_ops += 1
    if memory_id is not None and len(run.memory_ids) < DREAM_MEMORY_IDS:
        run.memory_ids.append(memory_id)
    rationale = detail.get("rationale")
    if isinstance(rationale, str) and rationale and len(run.rationales) < DREAM_RATIONALES:
        run.rationales.append(rationale)


def _steward_run_id(detail: Any) -> str | None:
    if not isinstance(detail, dict):
        return None
    author = detail.get("author")
    if isinstance(author, dict) and author.get("author") == "steward" and isinstance(author.get("run_id"), str):
        return author["run_id"]
    return None


def record_dreams(*, access: Access, realm: str, memory_id: str) -> list[DreamSummary]:
    """Steward runs whose audit rows touched one record, for its biography."""
    _require_realm_history(access)
    audit = Audit.objects.using(realm_alias(realm))
    index = realm_index(realm)
    # The audit table has no index on memory_id; the console's index keeps the steward's rows by record.
    audit = audit.filter(audit_id__in=index.steward_audit_ids(memory_id)) if index else audit.filter(memory_id=memory_id)
    rows = (
        audit.order_by("-applied_at_ms", "-audit_id")
        .values_list("op_kind", "memory_id", "detail", "applied_at_ms")[:DREAM_AUDIT_SCAN]
    )
    runs: dict[str, DreamSummary] = {}
    for op_kind, row_memory_id, detail_text, applied_at_ms in rows:
        run_id = _steward_run_id(detail := parse_json_text(detail_text))
        if run_id is not None:
            run = runs.setdefault(run_id, DreamSummary(realm, run_id, applied_at_ms, applied_at_ms))
            _fold_audit_row(run, op_kind, row_memory_id, detail, applied_at_ms)
    return list(runs.values())


# ---------------------------------------------------------------------------------------------
# Holdings and the other realm-wide lists (spec memory-store §5.6)


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


def scope_holdings(*, access: Access, realm: str | None) -> tuple[list[ScopeHoldings], list[str]]:
    """Per-scope counts, only for scopes the caller may read, in MobKit's scope order."""
    _require_realm_history(access)
    realms = panel_realms(realm)
    scopes: list[ScopeHoldings] = []
    for name in realms:
        scopes.extend(s for s in _realm_holdings(name) if scope_visible(access, s.scope_kind, s.scope_key))
    scopes.sort(key=lambda s: (SCOPE_ORDER.get(s.scope_kind, len(SCOPE_ORDER)), s.realm, s.scope_key))
    return scopes, realms


def _realm_holdings(realm: str) -> Iterator[ScopeHoldings]:
    counts: dict[tuple[str, str], dict[str, int]] = {}
    index = realm_index(realm)
    if index is not None:
        rows = index.holdings()  # kept current from the audit feed: no GROUP BY per page view
    else:
        rows = _cursor(realm).execute(
            "SELECT scope_kind, scope_key, status_kind, COUNT(*), COALESCE(SUM(LENGTH(body)), 0)"
            " FROM records GROUP BY 1, 2, 3"
        ).fetchall()
    for scope_kind, scope_key, status, count, body_chars in rows:
        bucket = counts.setdefault((scope_kind, scope_key), {"body_bytes": 0})
        # spec §5.6: an unknown status reads as active; body_bytes is SQLite LENGTH (characters).
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


def _cursor(realm: str):
    return connections[realm_alias(realm)].cursor()


@dataclass(frozen=True)
class ProposalRow:
    realm: str
    proposal_id: str
    scope_kind: str
    scope_key: str
    title: str
    kind: str
    author: str
    status: str
    created_at_ms: int
    tainted: bool


def pending_proposals(*, access: Access, realm: str | None, limit: int) -> tuple[list[ProposalRow], list[str]]:
    _require_realm_history(access)
    realms = panel_realms(realm)
    out: list[ProposalRow] = []
    for name in realms:
        rows = (
            Proposal.objects.using(realm_alias(name))
            .filter(status__in=("pending", "held"))
            .order_by("created_at_ms", "proposal_id")
            .values("proposal_id", "scope_kind", "scope_key", "record", "author", "status", "created_at_ms", "taint")
        )
        for row in rows[:limit]:
            if not scope_visible(access, row["scope_kind"], row["scope_key"]):
                continue
            record = parse_json_text(row["record"])
            record = record if isinstance(record, dict) else {}
            out.append(
                ProposalRow(
                    realm=name,
                    proposal_id=row["proposal_id"],
                    scope_kind=row["scope_kind"],
                    scope_key=row["scope_key"],
                    title=str(record.get("title", "")),
                    kind=str(record.get("kind", "")),
                    author=author_debug(parse_json_text(row["author"])),
                    status=row["status"],
                    created_at_ms=row["created_at_ms"],
                    tainted=row["taint"] is not None,
                )
            )
    out.sort(key=lambda p: p.created_at_ms)
    return out[:limit], realms


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


def injection_log(*, access: Access, realm: str | None, limit: int) -> tuple[list[InjectionRow], list[str]]:
    _require_realm_history(access)
    realms = panel_realms(realm)
    out: list[InjectionRow] = []
    for name in realms:
        rows = (
            Injection.objects.using(realm_alias(name))
            .order_by("-injection_id")
            .values("record_id", "identity", "session_key", "surface", "at_ms")[:limit]
        )
        out.extend(InjectionRow(realm=name, **row) for row in rows if _identity_visible(access, row["identity"]))
    out.sort(key=lambda row: row.at_ms, reverse=True)
    return out[:limit], realms


def _identity_visible(access: Access, identity: str) -> bool:
    return not access.enforced or access.allows("agent.view", identity)


@dataclass(frozen=True)
class HarvestRow:
    realm: str
    identity: str
    session_key: str | None
    cause: str
    retired_at_ms: int


def pending_harvests(*, access: Access, realm: str | None, limit: int) -> tuple[list[HarvestRow], list[str]]:
    _require_realm_history(access)
    realms = panel_realms(realm)
    out: list[HarvestRow] = []
    for name in realms:
        rows = (
            PendingHarvest.objects.using(realm_alias(name))
            .filter(status="pending")
            .order_by("retired_at_ms")
            .values("identity", "session_key", "cause", "retired_at_ms")[:limit]
        )
        out.extend(HarvestRow(realm=name, **row) for row in rows if _identity_visible(access, row["identity"]))
    out.sort(key=lambda row: row.retired_at_ms)
    return out[:limit], realms


@dataclass(frozen=True)
class DreamRunRow:
    realm: str
    run_id: str
    partition: str
    started_at_ms: int
    completed_at_ms: int
    ops_committed: int
    detail: Any


def dream_runs(*, access: Access, realm: str | None, limit: int) -> tuple[list[DreamRunRow], list[str]]:
    """Durable verdict sheets; a realm in the older format has none (no dream_runs table)."""
    _require_realm_history(access)
    realms = panel_realms(realm)
    out: list[DreamRunRow] = []
    for name in realms:
        if not store_format(name).has("dream_runs"):
            continue
        rows = (
            DreamRun.objects.using(realm_alias(name))
            .order_by("-completed_at_ms", "-run_id")
            .values_list("run_id", "partition_label", "started_at_ms", "completed_at_ms", "ops_committed", "detail")[:limit]
        )
        for run_id, partition, started, completed, ops, detail in rows:
            parsed = parse_json_text(detail)
            out.append(DreamRunRow(name, run_id, partition, started, completed, ops, detail if parsed is None else parsed))
    out.sort(key=lambda row: (row.completed_at_ms, row.run_id), reverse=True)
    return out[:limit], realms


@dataclass(frozen=True)
class AuditVerdictRow:
    realm: str
    run_id: str
    record_id: str
    verdict: str
    rationale: str
    created_at_ms: int


def open_audit_verdicts(*, access: Access, realm: str | None, limit: int) -> tuple[list[AuditVerdictRow], list[str]]:
    _require_realm_history(access)
    realms = panel_realms(realm)
    out: list[AuditVerdictRow] = []
    for name in realms:
        if not store_format(name).has("dream_audit_verdicts"):
            continue
        rows = (
            DreamAuditVerdict.objects.using(realm_alias(name))
            .filter(resolved_at_ms__isnull=True)
            .order_by("-created_at_ms", "record_id")
            .values("run_id", "record_id", "verdict", "rationale", "created_at_ms")[:limit]
        )
        out.extend(AuditVerdictRow(realm=name, **row) for row in rows)
    out.sort(key=lambda row: (-row.created_at_ms, row.record_id))
    return out[:limit], realms
