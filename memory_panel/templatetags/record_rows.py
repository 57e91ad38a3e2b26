"""The Records table's rows, written in Python.

A records page is mostly its rows, and Django's template engine spent about 90 µs on each (some 40
variable lookups and 15 escapes per row), more than the page's SQL. This tag writes the same
markup with plain string building: every value that comes from a record goes through ``escape``
(or is a number), so record text stays text (docs/ui.md §4).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape as _escape_text
from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from memory_panel.store.records import MemoryRecord
from memory_panel.templatetags.panel_format import age, human_bytes, record_url
from memory_panel.templatetags.panel_tabs import utility
from memory_panel.templatetags.search_format import marked
from memory_panel.wording import scope_words, value_words

register = template.Library()


def _e(value: Any) -> str:
    """Escaped text of ``value``, as ``{{ value }}`` with autoescape writes it."""
    return _escape_text(str(value), quote=True)


@register.simple_tag(takes_context=True)
def record_rows(context: template.Context, records: Iterable[MemoryRecord]) -> SafeString:
    """``<tr>`` rows of the Records table, one per record, with group headers when grouped."""
    hits: Mapping[tuple[str, str], Any] = context.get("hits") or {}
    claimants = context.get("claimants") or ()
    by_utility = context.get("sort") == "utility"
    many_realms = (context.get("realm_count") or 0) > 1
    realm_column = many_realms and not context.get("realm")
    grouped = context.get("grouped")
    parts: list[str] = []
    group = None
    for r in records:
        if grouped and group != (group := (r.realm, r.scope_kind, r.scope_key)):
            realm_note = f' <span class="small muted">· {_e(r.realm)}</span>' if many_realms else ""
            parts.append(
                f'<tr class="group-row" data-group="{_e(r.scope_kind)}:{_e(r.realm)}:{_e(r.scope_key)}">'
                f'<th scope="rowgroup" colspan="8">{_e(scope_words(r.scope_kind, r.scope_key))}{realm_note}</th></tr>\n'
            )
        parts.append(_row(r, hit=hits.get((r.realm, r.id)) if hits else None, claimant=r.id in claimants,
                          by_utility=by_utility, realm_column=realm_column))
    return mark_safe("".join(parts))


def _row(r: MemoryRecord, *, hit: Any, claimant: bool, by_utility: bool, realm_column: bool) -> str:
    status = _e(r.status)
    title = marked(hit.title) if hit and r.title else _e(r.title or "(untitled)")
    extra = f'\n    <p class="snippet small">{marked(hit.snippet)}</p>' if hit else ""
    flags = []
    if r.status == "quarantined":
        flags.append(f'<span class="chip chip--bad" title="quarantined: {_e(r.status_detail or "")}">Q</span>')
    if r.ever_quarantined:
        flags.append('<span class="chip chip--warn" title="ever quarantined">⚑</span>')
    if r.status == "superseded":
        flags.append(f'<span class="chip" title="superseded by {_e(r.status_detail or "")}">superseded</span>')
    if claimant:
        flags.append(f'<span class="chip chip--warn" title="claims to supersede {_e(r.supersedes)},'
                     ' which does not name it as successor">claimant</span>')
    if by_utility:
        u = utility(r)
        extra += (f'\n    <br><span class="small utility-line">inj {u["injected"]} · recall {u["recalled"]} · useful'
                  f' {u["useful"]} · ratio {u["ratio"]} · ~{human_bytes(u["spent"])} spent</span>')
        if u["dead"]:
            flags.append(f'<span class="chip chip--warn" title="injected {u["injected"]} times, never judged useful">DEAD</span>')
    if r.malformed:
        flags.append(f'<span class="chip chip--bad" title="malformed columns: {_e(", ".join(r.malformed))}">malformed</span>')
    realm_note = f'<span class="small muted"> · {_e(r.realm)}</span>' if realm_column else ""
    return (
        f'<tr class="record-row status-{status}" data-memory-id="{_e(r.id)}">\n'
        f'  <td><span class="chip status-chip status-chip--{status}">{status}</span></td>\n'
        f'  <td class="record-title">\n'
        f'    <a href="{_e(record_url(r.id, r.realm))}" title="{_e(r.id)}">{title}</a>{extra}\n'
        f'  </td>\n'
        f'  <td>{_e(value_words(r.kind))}</td>\n'
        f'  <td><span class="chip trust-chip">{_e(value_words(r.trust))}</span></td>\n'
        f'  <td>{_e(scope_words(r.scope_kind, r.scope_key))}{realm_note}</td>\n'
        f'  <td class="age">{age(r.updated_at_ms)}</td>\n'
        f'  <td class="num" title="{_e(r.body_bytes)} bytes">{human_bytes(r.body_bytes)}</td>\n'
        f'  <td class="flags">{"".join(flags)}</td>\n'
        f'</tr>\n'
    )
