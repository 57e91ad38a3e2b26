"""Search benchmark (docs/search.md): search, counts and exports at a million records, the realm untouched.

    .venv/bin/python bench/search.py [--records 1000000] [--keep DIR] [--reps 30]

Seeds a realm with ``seed_demo`` unless ``--keep DIR`` already holds one (bench/scale.py's
layout, so one seeded directory serves both), builds the console's search index (timed), then
through the real endpoints (Django's test client, a signed-in user, the full middleware stack):

- ``mobkit/memory/panel/search`` p50/p95 for a common word, a rare word and a phrase, first page
  and a page deep in a cursor walk;
- the capped counts (Records page count, search count) and their cost;
- ``records.ndjson`` and ``records.csv`` streamed end to end: rows per second and the peak
  Python heap while streaming (tracemalloc), for a filter matching ``--export-rows`` rows;
- the search index's size on disk next to the realm file's;
- the timeline's count (docs/timeline-live.md §6) over ``--timeline-events`` events in the
  console's own event log, for an admin, a reader granted one agent and a viewer of every agent,
  with and without filters, next to the timeline page itself and a count that reads every event.

The realm file's sha256 is taken before and after: the console never writes it.
``--timeline-only`` times the timeline's count alone, with no realm seeded.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import REALM, Row, configure_django, fingerprint, print_table, seed_if_missing, timed  # noqa: E402

QUERIES = (
    ("common word", "oslo"),
    ("very common word", "planning"),
    ("rare word", "5953"),
    ("phrase", '"vendor contract"'),
    ("two words", "visa monday"),
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="persistent-state directory kept between runs (reused if seeded)")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--export-identity", default="identity:luka", help="the identity whose rows are exported")
    parser.add_argument("--skip-export", action="store_true", help="time search and counts only")
    parser.add_argument("--timeline-events", type=int, default=100_000,
                        help="events in the event log for the timeline count (0: skip it)")
    parser.add_argument("--timeline-only", action="store_true", help="time the timeline count alone, no realm")
    return parser.parse_args()


# Who counts timeline events: every grant shape the count decides differently. alice administers,
# bob sees identity:luka and reads its memory, carol sees every agent and reads no memory, dave
# also reads mob memory (tests/support/postures.py TIMELINE_AUDIENCE).
TIMELINE_CALLERS = ("alice@example.test", "bob@example.test", "carol@example.test", "dave@example.test")
TIMELINE_AGENTS = ("identity:luka", *(f"identity:agent-{n}" for n in range(1, 200)))
TIMELINE_MOBS = 20


def timeline_event(n: int):
    """Event ``n`` of the bench log: agents' scoped writes and harvests, _system gates, operator
    updates and dreams, spread over 200 agents and 20 mobs (about 420 visibility keys)."""
    from mobkit_console.timeline.ingest import IncomingEvent

    agent, kind = TIMELINE_AGENTS[n // 10 % len(TIMELINE_AGENTS)], n % 10
    if kind < 4:
        identity, event_type, data = agent, "memory.record.remembered", {"scope_kind": "identity", "scope_key": agent}
    elif kind < 6:
        identity, event_type, data = agent, "memory.harvest.completed", {"promoted": 1}
    elif kind < 8:
        identity, event_type, data = "_system", "memory.promotion.pending_gate", {
            "scope_kind": "mob", "scope_key": f"mob-{n % TIMELINE_MOBS}"}
    elif kind == 8:
        identity, event_type, data = "_system", "memory.record.updated", {
            "scope_kind": "operator", "scope_key": "oncall"}
    else:
        identity, event_type, data = "_system", "memory.dream.started", {"run_id": f"dream-{n}"}
    return IncomingEvent(None, identity, event_type, 1_700_000_000_000 + n, {"realm": REALM, **data}, None)


def timeline_rows(events: int, reps: int, scratch: Path) -> list[Row]:
    """The timeline count's cost over ``events`` events, per caller and filter."""
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.test import Client

    from access.caller import Caller, access_for
    from mobkit_console.timeline.models import EventVisibilityKey, TimelineEvent
    from mobkit_console.timeline.selectors import EventFilter, events_count
    from mobkit_console.timeline.services import events_store
    from mobkit_console.timeline.visibility import envelope_visible
    from tests.support.postures import TIMELINE_AUDIENCE

    if TimelineEvent.objects.count() < events:
        started = time.monotonic()
        for start in range(TimelineEvent.objects.count(), events, 1000):
            events_store(events=[timeline_event(n) for n in range(start, min(start + 1000, events))])
        print(f"timeline: {events:,} events stored in {time.monotonic() - started:.1f} s, "
              f"{EventVisibilityKey.objects.count():,} visibility keys")
    access_toml = scratch / "access.toml"
    access_toml.write_text(TIMELINE_AUDIENCE, encoding="utf-8")
    settings.MOBKIT_ACCESS_CONFIG = str(access_toml)
    settings.MOBKIT_TIMELINE_MAX_EVENTS = 0  # the bench log is not pruned while it is timed

    rows: list[Row] = []
    admin, one_agent, viewer, mob_reader = TIMELINE_CALLERS
    for subject, label, filters in (
        (admin, "admin", EventFilter()),
        (admin, "admin, type dream.started", EventFilter(event_type="memory.dream.started")),
        (admin, "admin, identity identity:luka", EventFilter(identity="identity:luka")),
        (one_agent, "reader granted one agent", EventFilter()),
        (viewer, "viewer of every agent", EventFilter()),
        (viewer, "viewer, type remembered (none visible)", EventFilter(event_type="memory.record.remembered")),
        (mob_reader, "mob reader, type pending_gate", EventFilter(event_type="memory.promotion.pending_gate")),
    ):
        access = access_for(Caller(subject=subject))
        value = events_count(access=access, filters=filters)
        samples = timed(lambda a=access, f=filters: events_count(access=a, filters=f), reps)
        rows.append(Row("timeline count", label, samples,
                        note=f"= {f'>{value.cap:,}' if value.capped else f'{value.value:,}'}"))
    # What the count saves: deciding every event of the log in Python, once.
    reader = access_for(Caller(subject=one_agent))
    every = timed(lambda: sum(envelope_visible(reader, row.envelope()) for row in TimelineEvent.objects.iterator()), 1, 0)
    rows.append(Row("timeline count", "reference: every event decided in Python, one agent", every))
    for subject in (admin, one_agent):
        client = Client()
        client.force_login(User.objects.get_or_create(username=subject, email=subject)[0])
        rows.append(Row("timeline page", f"/console/timeline/ as {subject.split('@')[0]}",
                        timed(lambda c=client: c.get("/console/timeline/"), reps)))
    return rows


def export(client, fmt: str, identity: str):
    response = client.get(f"/console/memory/records.{fmt}", {"identity": identity})
    assert response.streaming, response.content[:500]
    return response.streaming_content


def main() -> None:
    args = parse_args()
    state = args.keep.absolute() if args.keep else Path(tempfile.mkdtemp(prefix="mobkit-search-state-"))
    scratch = Path(tempfile.mkdtemp(prefix="mobkit-search-console-"))
    configure_django(state, scratch / "console.sqlite3")
    if args.timeline_only:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        print_table(timeline_rows(args.timeline_events, args.reps, scratch))
        return

    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    from memory_panel.store import realm_index as realm_index_module, search_index as search_module
    from memory_panel.store.realms import realm_path

    realm_file = realm_path(REALM)
    seed_if_missing(realm_file, args.records)
    before = fingerprint(realm_file)
    call_command("migrate", verbosity=0)

    started = time.monotonic()
    if search_module.SEARCH_INDEX.newest(REALM) is None:
        search_module.SEARCH_INDEX.build(REALM)
        print(f"search index built in {time.monotonic() - started:.1f} s")
    if realm_index_module.REALM_INDEX.newest(REALM) is None:  # the export walks records pages
        realm_index_module.build(REALM)
    index_bytes = search_module.SEARCH_INDEX.size(REALM)
    print(f"realm file {before['size']:,} bytes; search index {index_bytes:,} bytes "
          f"({index_bytes / before['size']:.0%} of the realm)")

    client = Client()
    client.force_login(User.objects.get_or_create(username="bench")[0])

    def rpc(method: str, params: dict) -> dict:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        reply = client.post("/console/rpc", body, content_type="application/json").json()
        connections.close_all()
        assert "result" in reply, reply
        return reply["result"]

    rows: list[Row] = []
    # The same machine's cost of a plain records page, to read the figures below against.
    rows.append(Row("reference", "panel/records first page (limit 20)", timed(
        lambda: rpc("mobkit/memory/panel/records", {"limit": 20}), args.reps)))
    for label, query in QUERIES:
        first = rpc("mobkit/memory/panel/search", {"query": query, "limit": 20})
        rows.append(Row("search", f"{label} {query}: first page", timed(
            lambda q=query: rpc("mobkit/memory/panel/search", {"query": q, "limit": 20}), args.reps)))
        cursor = first["next_cursor"]
        for _ in range(10 if cursor else 0):  # ten pages in
            cursor = rpc("mobkit/memory/panel/search", {"query": query, "limit": 20, "cursor": cursor})["next_cursor"]
            if cursor is None:
                break
        if cursor:
            rows.append(Row("search", f"{label} {query}: page 11", timed(
                lambda q=query, c=cursor: rpc("mobkit/memory/panel/search", {"query": q, "limit": 20, "cursor": c}),
                args.reps)))

    from memory_panel.search_text import parse_query
    from memory_panel.selectors.counts import COUNT_CAP, record_count
    from memory_panel.store.record_filter import RecordFilter
    from access.caller import access_for, caller_for_user

    access = access_for(caller_for_user(User.objects.get(username="bench"), sign_in="session"))
    for label, filters, query in (
        ("count: all records", RecordFilter(), None),
        ("count: one identity", RecordFilter(scope_kind="identity", scope_key=args.export_identity), None),
        ("count: quarantined", RecordFilter(status="quarantined"), None),
        ("count: search oslo", RecordFilter(status="active"), parse_query("oslo")),
        ("count: search 5953", RecordFilter(status="active"), parse_query("5953")),
    ):
        value = record_count(access=access, realm=None, filters=filters, query=query)
        rows.append(Row("count", label, timed(
            lambda f=filters, q=query: record_count(access=access, realm=None, filters=f, query=q), args.reps),
            note=f"= {value.value if not value.capped else f'>{COUNT_CAP}'}"))
    for label, params in (("records page, no filter", {}), ("records page, q=oslo", {"q": "oslo"})):
        rows.append(Row("html", label, timed(lambda p=params: client.get("/console/memory/records/", p), args.reps)))
    if args.timeline_events:
        rows += timeline_rows(args.timeline_events, args.reps, scratch)

    print_table(rows)
    # CPU time per request: what a request costs this process, whatever else the machine runs.
    for label, method, params in (
        ("reference panel/records", "mobkit/memory/panel/records", {"limit": 20}),
        *((f"search {query}", "mobkit/memory/panel/search", {"query": query, "limit": 20}) for _, query in QUERIES),
    ):
        started = time.process_time()
        for _ in range(args.reps):
            rpc(method, params)
        print(f"cpu per request, {label}: {(time.process_time() - started) * 1000 / args.reps:.1f} ms")
    for fmt in () if args.skip_export else ("ndjson", "csv"):
        # Rows per second untraced; the peak Python heap in a second, traced pass (tracemalloc
        # slows allocation several times over, so one pass cannot give both).
        started = time.perf_counter()
        lines = sum(chunk.count(b"\n") for chunk in export(client, fmt, args.export_identity))
        seconds = time.perf_counter() - started
        tracemalloc.start()
        for _ in export(client, fmt, args.export_identity):
            pass
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"export {fmt}: {lines:,} lines in {seconds:.1f} s = {lines / seconds:,.0f} rows/s, "
              f"peak Python heap while streaming {peak / 2**20:.1f} MiB")
    after = fingerprint(realm_file)
    print("realm file unchanged" if after == before else f"REALM FILE CHANGED: {before} -> {after}")


if __name__ == "__main__":
    main()
