"""The Records list as a file: ``records.csv`` and ``records.ndjson`` (docs/search.md §6).

Same query parameters as the Records page (``q`` included) and every row they match that the
caller may read — not one page. Rows are produced by walking the same selectors page by page
with their own cursors, so an export equals walking ``panel/records`` (or ``panel/search``) and
holds one page in memory at any size. The walk runs lazily inside the response: a client that
disconnects closes the generator, which closes the realm connections it used.
"""

from __future__ import annotations

import contextvars
import csv
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connections
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from memory_panel.errors import StoreFailed, UnknownRealm
from memory_panel.search_text import SearchQuery
from memory_panel.selectors import records as record_selectors, search as search_selectors
from memory_panel.signals import announce, records_exported
from memory_panel.store.realms import realm_alias, store_failed
from memory_panel.store.record_filter import RecordFilter
from memory_panel.store.rows import SkippedRealm, noting_skipped_realms, panel_realms
from memory_panel.views.memory import RECORD_FILTER_PARAMS, records_query
from memory_panel.views.realm_choice import chosen_realm
from memory_panel.views.render import panel_view
from memory_panel.views.streaming import ndjson_line, streamed
from memory_panel.wire.params import RECORDS_MAX_LIMIT
from memory_panel.wire.results import record_json, search_result_json
from access.caller import Access

# Rows fetched per selector call: the largest records page, so memory stays at one page.
EXPORT_BATCH = RECORDS_MAX_LIMIT
# docs/search.md §6: one column per field of the records list row, in wire order. Nested values
# (scope, tags, provenance, usage, …) are their JSON text; status is split into kind and detail.
CSV_COLUMNS = (
    "id", "realm", "scope_kind", "scope_key", "kind", "title", "description", "body_bytes", "tags",
    "provenance", "trust", "status", "status_detail", "supersedes", "derived_from", "working_set_rank",
    "created_at_ms", "updated_at_ms", "usage", "ever_quarantined", "malformed_columns",
)
SEARCH_COLUMNS = ("score", "snippet")
# Cells a spreadsheet would evaluate as a formula (OWASP "CSV injection"); prefixed with "'".
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@panel_view
def records_csv(request: HttpRequest, access: Access) -> HttpResponse:
    return _export(request, access, "csv")


@panel_view
def records_ndjson(request: HttpRequest, access: Access) -> HttpResponse:
    return _export(request, access, "ndjson")


def _export(request: HttpRequest, access: Access, fmt: str) -> HttpResponse:
    params = request.GET.dict()
    asked = records_query(params, access=access, realm=chosen_realm(request))
    query = asked.query
    walked = export_rows(access=access, realm=asked.realm, filters=asked.filters, query=query)
    asked_for = {name: params[name].strip() for name in RECORD_FILTER_PARAMS if params.get(name, "").strip()}
    # The download ends after the view returned, perhaps on another thread: announce it in the
    # request's context, so listeners see this request (its caller) and not whichever ran last.
    context = contextvars.copy_context()
    rows = _counted(walked, lambda count, complete: context.run(
        announce, records_exported, access=access, realm=asked.realm, format=fmt, filters=asked_for, rows=count,
        complete=complete,
    ))
    lines = _csv_lines(rows, with_search=query is not None) if fmt == "csv" else _ndjson_lines(rows)
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/x-ndjson"
    response = StreamingHttpResponse(streamed(request, lines), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="records.{fmt}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@dataclass(frozen=True)
class ExportCut:
    """Rows an export could not include: a realm left out, or a walk cut short (docs/search.md §6)."""

    realm: str | None
    reason: str

    @property
    def message(self) -> str:
        where = f"realm '{self.realm}' could not be read: " if self.realm is not None else ""
        return f"export incomplete: {where}{self.reason}"


ExportLine = dict[str, Any] | ExportCut


def export_rows(
    *, access: Access, realm: str | None, filters: RecordFilter, query: SearchQuery | None
) -> Iterator[ExportLine]:
    """Every row the filters (and query) match that the caller may read, as its RPC JSON.

    The first page is read before the generator is handed out, so a denial or a bad realm is the
    page's error, not a broken download. A realm left out of the walk, or a failure after the
    download started, ends it with an ``ExportCut`` per realm, never as a file that looks whole.
    """
    walk: Callable[..., Any]
    if query is None:
        walk, shape = record_selectors.record_list, lambda page: [record_json(r, with_body=False) for r in page.records]
        kwargs: dict[str, Any] = {}
    else:
        walk, shape = search_selectors.record_search, lambda page: [search_result_json(r) for r in page.results]
        kwargs = {"query": query}

    def read(cursor: Any) -> tuple[Any, list[SkippedRealm]]:
        with noting_skipped_realms() as skipped:
            page = walk(access=access, realm=realm, filters=filters, limit=EXPORT_BATCH, cursor=cursor, **kwargs)
        return page, skipped

    first, first_skipped = read(None)

    def rows() -> Iterator[ExportLine]:
        page, left_out = first, {skipped.name: skipped for skipped in first_skipped}
        try:
            while True:
                yield from shape(page)
                if page.next_cursor is None:
                    break
                try:
                    page, skipped = read(page.next_cursor)
                except (StoreFailed, DatabaseError) as error:
                    failure = error if isinstance(error, StoreFailed) else store_failed(error)
                    yield ExportCut(failure.realm, failure.reason)
                    return
                left_out.update((s.name, s) for s in skipped if s.name not in left_out)
            yield from (ExportCut(skipped.name, skipped.reason) for skipped in left_out.values())
        finally:
            _close_realm_connections(realm)

    return rows()


def _counted(rows: Iterator[dict[str, Any]], done: Callable[[int, bool], None]) -> Iterator[dict[str, Any]]:
    """``rows`` passed through; ``done(count, complete)`` once the download ends, finished or cut short."""
    count, complete = 0, False
    try:
        for row in rows:
            yield row
            count += 1
        complete = True
    finally:
        rows.close()
        done(count, complete)


def _close_realm_connections(realm: str | None) -> None:
    # The download may end early (a client gone); its realm connections must not outlive it.
    for name in panel_realms(realm):
        try:
            connections[realm_alias(name)].close()
        except UnknownRealm:
            continue  # the file went away: nothing of it is open


def _ndjson_lines(rows: Iterator[ExportLine]) -> Iterator[str]:
    try:
        for row in rows:
            if isinstance(row, ExportCut):
                row = {"error": {"message": row.message, "realm": row.realm, "reason": row.reason}}
            yield ndjson_line(row)
    finally:
        rows.close()


def csv_cells(row: dict[str, Any], *, with_search: bool) -> list[str]:
    """One CSV line's cells for a records row (its wire JSON), formula-looking text neutralised."""
    status = row["status"]
    values: dict[str, Any] = {
        **row,
        "realm": row["scope"]["realm"],
        "scope_kind": row["scope"]["scope"],
        "scope_key": next((v for k, v in row["scope"].items() if k not in ("scope", "realm")), ""),
        "status": status["status"],
        "status_detail": status.get("by", status.get("reason", "")),
    }
    columns = CSV_COLUMNS + (SEARCH_COLUMNS if with_search else ())
    return [csv_cell(values.get(column)) for column in columns]


def csv_cell(value: Any) -> str:
    """One CSV cell: JSON text for nested values, formula-looking text neutralised."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    else:
        text = str(value)
    if isinstance(value, str) and text.startswith(FORMULA_START):
        return "'" + text
    return text


def _csv_lines(rows: Iterator[ExportLine], *, with_search: bool) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(cells: list[str]) -> str:
        writer.writerow(cells)
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    try:
        yield line(list(CSV_COLUMNS + (SEARCH_COLUMNS if with_search else ())))
        for row in rows:
            # A cut is one cell a reader cannot take for a record: it starts with "#", not an id.
            yield line([f"# {row.message}"] if isinstance(row, ExportCut) else csv_cells(row, with_search=with_search))
    finally:
        rows.close()
