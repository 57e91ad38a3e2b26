"""What changed between two moments: the page, ``changes.ndjson`` and ``changes.csv`` (docs/history.md §5).

``from`` and ``to`` are ISO 8601 date-times; ``realm`` names one realm, else the operator's realm
choice holds. With ``against``, the page compares ``realm`` with that realm by logical key instead. Same visibility as the pages: a change is listed to those who may read its record as
it stood right after it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from memory_panel.cursor import parse_moment_cursor
from memory_panel.errors import InvalidParams
from memory_panel.selectors import as_of as as_of_selectors
from memory_panel.selectors.compare import compare_realms
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


def _comparison(request: HttpRequest, access: Access, against: str) -> HttpResponse:
    """Two realms compared by logical key, as they stand or at ``as_of`` (docs/history.md §6)."""
    realm = parse_realm(request.GET.get("realm"))
    realm = realm if realm is not None else chosen_realm(request)
    if realm is None:
        raise InvalidParams("realm is needed to compare it against another realm")
    at_ms = parse_moment(request.GET.get("as_of"), "as_of")
    limit = parse_limit(query_uint(request.GET.get("limit", "")), default=RECORDS_DEFAULT_LIMIT,
                        maximum=RECORDS_MAX_LIMIT)
    comparison = compare_realms(access=access, realm=realm, against=against, at_ms=at_ms, limit=limit)
    context = {"comparison": comparison, "as_of_label": moment_label(at_ms) if at_ms is not None else None}
    return render_page(request, "memory_panel/compare.html", "memory_panel/compare.html", context)


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


@panel_view
def changes_ndjson(request: HttpRequest, access: Access) -> HttpResponse:
    return _download(request, (ndjson_line(row) for row in _every_change(request, access)), "ndjson",
                     "application/x-ndjson")


@panel_view
def changes_csv(request: HttpRequest, access: Access) -> HttpResponse:
    return _download(request, _csv_lines(_every_change(request, access)), "csv", "text/csv; charset=utf-8")


def _csv_lines(rows: Iterator[dict]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        record, scope = row["record"], row["record"]["scope"]
        writer.writerow([csv_cell(value) for value in (
            row["at_ms"], row["change"], scope["realm"], record["id"], scope["scope"],
            next((v for k, v in scope.items() if k not in ("scope", "realm")), ""), record["kind"], record["title"],
            row["status"]["status"], row.get("other_id"),
        )])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()
