"""The injection ledger: which record was put in front of which identity, when (docs/store-format.md §1.3, §5.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_panel.models import Injection
from memory_panel.selectors.named_records import first_visible, unreadable_record_ids
from memory_panel.store.realms import realm_alias
from memory_panel.store.rows import realm_rows
from memory_panel.visibility import identity_visible, require_realm_history
from memory_panel.wire.params import INJECTIONS_PER_RECORD

if TYPE_CHECKING:
    from access.caller import Access


@dataclass(frozen=True)
class InjectionRow:
    realm: str
    record_id: str
    identity: str
    session_key: str | None
    surface: str
    at_ms: int


def record_injections(alias: str, realm: str, memory_id: str) -> list[InjectionRow]:
    rows = (
        Injection.objects.using(alias)
        .filter(record_id=memory_id)
        .order_by("-at_ms", "-injection_id")
        .values("record_id", "identity", "session_key", "surface", "at_ms")[:INJECTIONS_PER_RECORD]
    )
    return [InjectionRow(realm=realm, **row) for row in rows]


def injection_log(*, access: Access, realm: str | None, limit: int) -> tuple[list[InjectionRow], list[str]]:
    require_realm_history(access)

    def newest(name: str) -> list[InjectionRow]:
        rows = (
            Injection.objects.using(realm_alias(name))
            .order_by("-injection_id")
            .values("record_id", "identity", "session_key", "surface", "at_ms")
        )

        def readable(batch: list[dict[str, Any]]) -> list[InjectionRow]:
            shown = [InjectionRow(realm=name, **row) for row in batch if identity_visible(access, row["identity"])]
            # docs/access.md §2.8: a row names its record, so it also needs that record to be visible.
            hidden = unreadable_record_ids(access=access, realm=name, ids=(row.record_id for row in shown))
            return [row for row in shown if row.record_id not in hidden]

        return first_visible(rows.iterator(), keep=readable, limit=limit)

    out, realms = realm_rows(realm, newest)
    out.sort(key=lambda row: row.at_ms, reverse=True)
    return out[:limit], realms
