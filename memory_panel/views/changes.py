"""What changed between two moments: the page, ``changes.ndjson`` and ``changes.csv`` (docs/history.md §5).

``from`` and ``to`` are ISO 8601 date-times; ``realm`` names one realm, else the operator's realm
choice holds. Same visibility as the pages: a change is listed to those who may read its record as
it stood right after it. With ``against``, the page and both exports compare ``realm`` with that
realm by logical key instead (docs/history.md §6).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from memory_panel.cursor import encode_key_cursor, parse_key_cursor, parse_moment_cursor
from memory_panel.errors import InvalidParams
from memory_panel.selectors import as_of as as_of_selectors
from memory_panel.selectors.compare import body_diffs, compare_realms, every_difference
from memory_panel.views.as_of import moment_label
from memory_panel.views.export import csv_cell
from memory_panel.views.realm_choice import chosen_realm
from memory_panel.views.render import panel_view, render_page
from memory_panel.views.streaming import ndjson_line, streamed
from memory_panel.wire.params import RECORDS_DEFAULT_LIMIT, RECORDS_MAX_LIMIT, parse_limit, parse_moment, parse_realm, query_uint
from memory_panel.wire.results import change_json
from access.caller import Access

CHANGES_PARAMS = ("from", "to", "realm", "limit")
CSV_COLUMNS = ("at_ms", "change", "realm", "record_id", "scope_kind", "scope_key", "kind", "title", "status",
               "other_id")
COMPARE_PARAMS = ("against", "as_of", "limit")
COMPARE_CSV_COLUMNS = ("difference", "scope_kind", "scope_key", "title", "realm", "record_id", "against", "against_id")


def _window(request: HttpRequest) -> tuple[str | None, int, int]:
    from_ms, to_ms = parse_moment(request.GET.get("from"), "from"), parse_moment(request.GET.get("to"), "to")
    if from_ms is None or to_ms is None:
        raise InvalidParams("from and to are both needed, each an ISO 8601 date-time such as 2026-11-20T14:05:00Z")
    if from_ms >= to_ms:
        raise InvalidParams("from must be before to")
    realm = parse_realm(request.GET.get("realm"))
    return (realm if realm is not None else chosen_realm(request)), from_ms, to_ms


@panel_view
def changes(request: HttpRequest, access: Access) -> HttpResponse:
    against = parse_realm(request.GET.get("against"))
    if against is not None:
        return _comparison(request, access, against)
    realm, from_ms, to_ms = _window(request)
    limit = parse_limit(query_uint(request.GET.get("limit", "")), default=RECORDS_DEFAULT_LIMIT,
                        maximum=RECORDS_MAX_LIMIT)
    page = as_of_selectors.changes_page(access=access, realm=realm, from_ms=from_ms, to_ms=to_ms, limit=limit,
                                        cursor=parse_moment_cursor(request.GET.get("cursor")))
    state = {name: request.GET[name].strip() for name in CHANGES_PARAMS if request.GET.get(name, "").strip()}
    context = {
        "realm": realm,
        "page": page,
        "rows": [(row, page.diffs.get((row.realm, row.record.id))) for row in page.changes],
        "from_label": moment_label(from_ms),
        "to_label": moment_label(to_ms),
        "to": state["to"],
        "more_url": "?" + urlencode({**state, "cursor": page.next_cursor.encode()}) if page.next_cursor else None,
        "export": {fmt: f"changes.{fmt}?" + urlencode(state) for fmt in ("ndjson", "csv")},
    }
    return render_page(request, "memory_panel/changes.html", "memory_panel/changes.html", context)


def _compared(request: HttpRequest) -> tuple[str, int | None]:
    realm = parse_realm(request.GET.get("realm"))
    realm = realm if realm is not None else chosen_realm(request)
    if realm is None:
        raise InvalidParams("realm is needed to compare it against another realm")
    return realm, parse_moment(request.GET.get("as_of"), "as_of")


def _comparison(request: HttpRequest, access: Access, against: str) -> HttpResponse:
    """Two realms compared by logical key, as they stand or at ``as_of`` (docs/history.md §6)."""
    realm, at_ms = _compared(request)
    limit = parse_limit(query_uint(request.GET.get("limit", "")), default=RECORDS_DEFAULT_LIMIT,
                        maximum=RECORDS_MAX_LIMIT)
    only = request.GET.get("list", "").strip() or None
    comparison = compare_realms(access=access, realm=realm, against=against, at_ms=at_ms, limit=limit, only=only,
                                after=parse_key_cursor(request.GET.get("cursor")))
    diffs = body_diffs(access=access, comparison=comparison)
    state = {"realm": realm, **{name: request.GET[name].strip() for name in COMPARE_PARAMS
                                 if request.GET.get(name, "").strip()}}
    context = {
        "comparison": comparison,
        "differing_rows": [(row, diffs.get(row.key)) for row in comparison.lists["differing"].rows]
        if "differing" in comparison.lists else [],
        "as_of_label": moment_label(at_ms) if at_ms is not None else None,
        "more": {name: "?" + urlencode({**state, "list": name, "cursor": encode_key_cursor(page.next_cursor)})
                 for name, page in comparison.lists.items() if page.next_cursor},
        "all_url": "?" + urlencode(state),
        "export": {fmt: f"changes.{fmt}?" + urlencode(state) for fmt in ("ndjson", "csv")},
    }
    return render_page(request, "memory_panel/compare.html", "memory_panel/compare.html", context)


def _every_difference(request: HttpRequest, access: Access, against: str) -> Iterator[dict]:
    """Every key the two realms differ in, worked out before the response starts, as
    ``_every_change`` reads its rows."""
    realm, at_ms = _compared(request)
    return iter([{
        "difference": name, "scope_kind": found.key[0], "scope_key": found.key[1], "title": found.key[2],
        "realm": realm, "record_id": found.mine.memory_id if found.mine else None,
        "against": against, "against_id": found.theirs.memory_id if found.theirs else None,
    } for name, found in every_difference(access=access, realm=realm, against=against, at_ms=at_ms)])


def _every_change(request: HttpRequest, access: Access) -> Iterator[dict]:
    """Every change, read before the response starts: a bad window or an unreadable realm is the
    request's error, and no realm connection is left to the streaming thread."""
    realm, from_ms, to_ms = _window(request)
    rows = as_of_selectors.changes_between(access=access, realm=realm, from_ms=from_ms, to_ms=to_ms)
    return iter([change_json(row, as_of_selectors.change_diff(access, row) if row.change.kind == "superseded" else None)
                 for row in rows])


def _download(request: HttpRequest, lines: Iterator[str], fmt: str, content_type: str) -> HttpResponse:
    response = StreamingHttpResponse(streamed(request, lines), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="changes.{fmt}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _exported(request: HttpRequest, access: Access) -> tuple[Iterator[dict], bool]:
    """The rows an export holds, and whether they are a comparison's (``against``) or changes."""
    against = parse_realm(request.GET.get("against"))
    if against is not None:
        return _every_difference(request, access, against), True
    return _every_change(request, access), False


@panel_view
def changes_ndjson(request: HttpRequest, access: Access) -> HttpResponse:
    rows, _ = _exported(request, access)
    return _download(request, (ndjson_line(row) for row in rows), "ndjson", "application/x-ndjson")


@panel_view
def changes_csv(request: HttpRequest, access: Access) -> HttpResponse:
    rows, compared = _exported(request, access)
    if compared:
        lines = _csv_lines(COMPARE_CSV_COLUMNS, ([row[name] for name in COMPARE_CSV_COLUMNS] for row in rows))
    else:
        lines = _csv_lines(CSV_COLUMNS, map(_change_cells, rows))
    return _download(request, lines, "csv", "text/csv; charset=utf-8")


def _change_cells(row: dict) -> list:
    record, scope = row["record"], row["record"]["scope"]
    return [row["at_ms"], row["change"], scope["realm"], record["id"], scope["scope"],
            next((v for k, v in scope.items() if k not in ("scope", "realm")), ""), record["kind"], record["title"],
            row["status"]["status"], row.get("other_id")]


def _csv_lines(columns: tuple[str, ...], rows: Iterator[list]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for cells in rows:
        writer.writerow([csv_cell(value) for value in cells])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()
