"""Reading the audit log: who may, the filters, keyset pages (docs/audit-and-oidc.md §3)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, time as day_start, timezone as tz
from typing import Any

from django.utils.dateparse import parse_date, parse_datetime

from access.caller import Access, can_read_access
from memory_panel.errors import AccessDenied, InvalidParams
from memory_panel.wire.params import parse_limit, query_uint
from mobkit_console.audit.models import ACTIONS, AuditEntry

DEFAULT_LIMIT = 100
MAX_LIMIT = 500
FILTER_PARAMS = ("subject", "action", "realm", "since", "until")
FILTER_MAX_CHARS = 255  # the longest value a filtered column holds


@dataclass(frozen=True)
class AuditFilter:
    subject: str | None = None
    action: str | None = None
    realm: str | None = None
    since: datetime | None = None  # inclusive
    until: datetime | None = None  # exclusive


@dataclass(frozen=True)
class AuditPage:
    entries: list[dict[str, Any]]
    next_cursor: int | None  # the id the next page starts below; None on the last page


def audit_readable(*, access: Access) -> bool:
    """Console admins (Django superusers) and whoever may administer access.toml (docs/audit-and-oidc.md §3)."""
    return can_read_access(access)


def require_audit_reader(*, access: Access) -> None:
    if not audit_readable(access=access):
        raise AccessDenied("access.admin", None)


def audit_filter_parse(params: dict[str, str]) -> AuditFilter:
    """The filters of a query string; InvalidParams naming the parameter that is wrong."""
    text = {name: params.get(name, "").strip() or None for name in FILTER_PARAMS}
    for name, value in text.items():
        if value is not None and (len(value) > FILTER_MAX_CHARS or not value.isprintable()):
            raise InvalidParams(f"{name} must be printable text of at most {FILTER_MAX_CHARS} characters")
    if text["action"] is not None and text["action"] not in ACTIONS:
        raise InvalidParams(f"action must be one of {', '.join(ACTIONS)}, not '{text['action']}'")
    return AuditFilter(
        subject=text["subject"],
        action=text["action"],
        realm=text["realm"],
        since=_moment(text["since"], name="since"),
        until=_moment(text["until"], name="until"),
    )


def audit_cursor_parse(raw: str | None) -> int | None:
    if raw is None or not raw.strip():
        return None
    value = query_uint(raw)
    if value is None or not 0 < value < 2**63:
        raise InvalidParams(f"cursor must be an entry id from a page's next link, not '{raw.strip()}'")
    return value


def audit_limit_parse(raw: str | None) -> int:
    return parse_limit(query_uint(raw or ""), default=DEFAULT_LIMIT, maximum=MAX_LIMIT)


def _moment(raw: str | None, *, name: str) -> datetime | None:
    """An ISO 8601 date or date-time; a date means its first instant, a time without zone means UTC."""
    if raw is None:
        return None
    try:
        moment = parse_datetime(raw)
        if moment is None and (day := parse_date(raw)) is not None:
            moment = datetime.combine(day, day_start())
    except ValueError:
        moment = None
    if moment is None:
        raise InvalidParams(f"{name} must be an ISO 8601 date or date-time (2026-12-02 or 2026-12-02T14:00Z), not '{raw}'")
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=tz.utc)


# What an entry shows, read as plain values: audit.ndjson walks every entry, and a model instance
# per row is work nobody reads (bench/load.py --scenario audit).
ENTRY_FIELDS = ("id", "at", "subject", "sign_in", "client", "action", "realm", "target", "outcome", "detail")


def audit_list(*, filters: AuditFilter, limit: int, cursor: int | None) -> AuditPage:
    """Newest first, ``limit`` entries from below ``cursor``: a keyset page on the entry id."""
    rows = AuditEntry.objects.order_by("-id").values(*ENTRY_FIELDS)
    for field in ("subject", "action", "realm"):
        if getattr(filters, field) is not None:
            rows = rows.filter(**{field: getattr(filters, field)})
    if filters.since is not None:
        rows = rows.filter(at__gte=filters.since)
    if filters.until is not None:
        rows = rows.filter(at__lt=filters.until)
    if cursor is not None:
        rows = rows.filter(id__lt=cursor)
    fetched = list(rows[: limit + 1])
    shown = fetched[:limit]
    more = len(fetched) > limit
    return AuditPage([entry_json(entry) for entry in shown], shown[-1]["id"] if more else None)


def audit_walk(*, filters: AuditFilter, batch: int = MAX_LIMIT) -> Iterator[dict[str, Any]]:
    """Every entry the filters match, newest first, one page in memory at a time."""
    cursor: int | None = None
    while True:
        page = audit_list(filters=filters, limit=batch, cursor=cursor)
        yield from page.entries
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


def entry_json(entry: dict[str, Any]) -> dict[str, Any]:
    """The wire shape of one entry (the NDJSON line, and what the page shows), field by field."""
    return {
        "id": entry["id"],
        "at": entry["at"].isoformat().replace("+00:00", "Z"),
        "subject": entry["subject"],
        "sign_in": entry["sign_in"],
        "client": entry["client"],
        "action": entry["action"],
        "realm": entry["realm"],
        "target": entry["target"],
        "outcome": entry["outcome"],
        "detail": entry["detail"],
    }
