"""The records filter: one value from the wire's params to both indexes and the direct read.

``memory_panel.wire.params.record_filter`` makes it from a request (docs/wire-contract.md §1.2),
``for_caller`` adds what that caller may never see (docs/access.md §2.4), and the realm index,
the search index and the selectors' direct reads of a realm file all take it as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from memory_panel.visibility import hidden_scope_kinds, sees_quarantined

if TYPE_CHECKING:
    from access.caller import Access


@dataclass(frozen=True)
class RecordFilter:
    """What a records list keeps: the request's equality filters, then the caller's limits.

    A search cursor is bound to the request's filters (``selectors.search.query_digest`` hashes
    this value's repr), so only the request's fields are in the repr: the caller's limits follow
    from who asks, and leaving them out keeps every cursor the console ever issued valid.
    """

    # MobKit's scope, scope_key and status filters.
    scope_kind: str | None = None
    scope_key: str | None = None
    status: str | None = None
    # Console additions (MobKit filters kind and trust client-side): the HTML Records page passes
    # them so keyset pages stay full; the RPC never sets them, keeping MobKit's params exact.
    kind: str | None = None
    trust: str | None = None
    # The Records page's author kind (``store.records.AUTHOR_KINDS``), the console's alone. Out of
    # the repr while unset, as every cursor issued before it existed was bound without it
    # (``selectors.search.query_digest`` adds it when set).
    author: str | None = field(default=None, repr=False)
    # Scope kinds no grant of the caller could reveal (``visibility.hidden_scope_kinds``).
    hidden_scope_kinds: tuple[str, ...] = field(default=(), repr=False)
    # The caller may not read reviewer-only rows: quarantined ones and retired quarantine evidence
    # (a tombstoned row that was ever quarantined, docs/store-format.md §5.5). The search index
    # keeps that per document and applies it exactly; the realm index and a realm's direct read
    # know only the status, so they leave out quarantined rows and the row check (``record_visible``)
    # the evidence.
    hide_reviewer_only: bool = field(default=False, repr=False)
    # None: every scope the other filters allow; else only these (kind, key) pairs — what a caller
    # granted a few scopes of many may read, so an index never walks the others' entries.
    scopes: tuple[tuple[str, str], ...] | None = field(default=None, repr=False)

    def for_caller(self, access: Access) -> RecordFilter:
        """This filter narrowed to what ``access`` may see: hidden scope kinds, reviewer-only rows."""
        return replace(
            self, hidden_scope_kinds=hidden_scope_kinds(access), hide_reviewer_only=not sees_quarantined(access)
        )

    def within(self, scopes: Iterable[tuple[str, str]]) -> RecordFilter:
        """This filter, kept to these scopes only."""
        return replace(self, scopes=tuple(scopes))

    def admits_scope(self, scope_kind: Any, scope_key: Any) -> bool:
        """Could a row of this scope pass? The scope filters and hidden kinds (not ``scopes``)."""
        return (
            self.scope_kind in (None, scope_kind)
            and self.scope_key in (None, scope_key)
            and scope_kind not in self.hidden_scope_kinds
        )

    def admits(self, scope_kind: Any, scope_key: Any, status: Any, kind: Any, trust: Any, author: Any) -> bool:
        """Does a row with these values (``author`` its author kind) pass, as the realm index would decide it?"""
        return (
            self.admits_scope(scope_kind, scope_key)
            and (self.scopes is None or (scope_kind, scope_key) in self.scopes)
            and self.status in (None, status)
            and self.kind in (None, kind)
            and self.trust in (None, trust)
            and self.author in (None, author)
            and not (self.hide_reviewer_only and status == "quarantined")
        )

    def realm_columns(self) -> dict[str, str]:
        """The equality filters given, keyed by the realm file's ``records`` columns."""
        wanted = {
            "scope_kind": self.scope_kind,
            "scope_key": self.scope_key,
            "status_kind": self.status,
            "kind": self.kind,
            "trust": self.trust,
        }
        return {column: value for column, value in wanted.items() if value is not None}
