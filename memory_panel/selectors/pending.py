"""Work waiting on the runtime: proposals not yet committed and sessions awaiting harvest (docs/store-format.md §5.6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_panel.models import PendingHarvest, Proposal
from memory_panel.selectors.named_records import first_visible
from memory_panel.store.realm_memo import kept_rows, realm_memo
from memory_panel.store.realms import realm_alias
from memory_panel.store.records import parse_json_text
from memory_panel.store.rows import merged_realm_rows, realm_rows
from memory_panel.visibility import identity_visible, require_realm_history, scope_visible
from memory_panel.wire.rust_debug import author_debug

if TYPE_CHECKING:
    from access.caller import Access


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
    require_realm_history(access)

    def readable(batch: list[ProposalRow]) -> list[ProposalRow]:
        # docs/access.md §2.8: filtered before the limit, so hidden rows never shorten a page.
        return [row for row in batch if scope_visible(access, row.scope_kind, row.scope_key)]

    merged, realms = merged_realm_rows(realm, "open_proposals", _kept_open_proposals, order=_by_age)
    if merged is not None:
        return first_visible(iter(merged), keep=readable, limit=limit), realms

    def open_proposals(name: str) -> list[ProposalRow]:
        kept = _kept_open_proposals(name)
        rows = iter(kept) if kept is not None else (_proposal_row(name, row) for row in _open_proposal_rows(name).iterator())
        return first_visible(rows, keep=readable, limit=limit)

    out, realms = realm_rows(realm, open_proposals)
    out.sort(key=_by_age)
    return out[:limit], realms


def _by_age(row: ProposalRow) -> int:
    return row.created_at_ms


def _kept_open_proposals(name: str) -> list[ProposalRow] | None:
    """The realm's open proposals, oldest first, kept while it stands still; None when too many to keep."""

    def rows() -> list[ProposalRow] | None:
        kept = kept_rows(_open_proposal_rows(name).iterator())
        return None if kept is None else [_proposal_row(name, row) for row in kept]

    return realm_memo(name, "open_proposals", rows)


def _open_proposal_rows(name: str):
    return (
        Proposal.objects.using(realm_alias(name))
        .filter(status__in=("pending", "held"))
        .order_by("created_at_ms", "proposal_id")
        .values("proposal_id", "scope_kind", "scope_key", "record", "author", "status", "created_at_ms", "taint")
    )


def _proposal_row(realm: str, row: dict[str, Any]) -> ProposalRow:
    record = parse_json_text(row["record"])
    record = record if isinstance(record, dict) else {}
    return ProposalRow(
        realm=realm,
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


@dataclass(frozen=True)
class HarvestRow:
    realm: str
    identity: str
    session_key: str | None
    cause: str
    retired_at_ms: int


def pending_harvests(*, access: Access, realm: str | None, limit: int) -> tuple[list[HarvestRow], list[str]]:
    require_realm_history(access)

    def harvests(name: str) -> list[HarvestRow]:
        rows = (
            PendingHarvest.objects.using(realm_alias(name))
            .filter(status="pending")
            .order_by("retired_at_ms")
            .values("identity", "session_key", "cause", "retired_at_ms")
        )
        def readable(batch: list[dict[str, Any]]) -> list[HarvestRow]:
            return [HarvestRow(realm=name, **row) for row in batch if identity_visible(access, row["identity"])]

        return first_visible(rows.iterator(), keep=readable, limit=limit)

    out, realms = realm_rows(realm, harvests)
    out.sort(key=lambda row: row.retired_at_ms)
    return out[:limit], realms
