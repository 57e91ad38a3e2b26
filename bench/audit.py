"""Audit log benchmark: what the audit log adds to a page, on vs off.

    .venv/bin/python bench/audit.py [--records 20000] [--reps 200]

Seeds a demo realm in a throwaway directory, then answers the same requests through the real
endpoints (Django's test client, a signed-in user, the full middleware stack) with the audit log
on (its middleware and receivers, the background writer flushing every 0.25 s) and off (neither),
alternating on and off request by request so drift on a shared machine hits both alike:

- the Records page with a search (``q``): one queued entry (``records.search``);
- the Records page without one: nothing recorded, only the caller named;
- a quarantined record's page: its entry written before the body is shown (fail closed).

Prints p50/p95 per case and the p50 difference, and the entries the run wrote.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import REALM, Row, configure_django, print_table, seed_if_missing  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=200)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    state = Path(tempfile.mkdtemp(prefix="audit-bench-"))
    configure_django(state, state / "console.sqlite3")

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import close_old_connections
    from django.test import Client, override_settings

    from access.caller import Caller, access_for
    from memory_panel.selectors.quarantine import quarantine_queue
    from memory_panel.store import realm_index, search_index
    from mobkit_console.audit import receivers
    from mobkit_console.audit.models import AuditEntry
    from mobkit_console.audit.services import audit_flush

    call_command("migrate", verbosity=0)
    seeded = seed_if_missing(settings.MOBKIT_AGENT_MEMORY_ROOT / f"{REALM}.sqlite3", args.records)
    print(f"seeded {args.records:,} records in {seeded or 0:.0f} s under {state}")
    # The console's realm and search indexes, built before anything is timed (as bench/search.py does).
    realm_index.build(REALM)
    search_index.SEARCH_INDEX.build(REALM)
    user = get_user_model().objects.create_user("admin")
    quarantined = quarantine_queue(access=access_for(Caller(subject="admin")), realm=REALM, limit=1).records[0].id

    def client(*, audited: bool) -> Client:
        # Middleware is loaded at a client's first request: the "off" client never has the audit's.
        made = Client()
        made.force_login(user)
        chain = settings.MIDDLEWARE if audited else [m for m in settings.MIDDLEWARE if ".audit." not in m]
        with override_settings(MIDDLEWARE=chain):
            made.get("/console/")
        return made

    on, off = client(audited=True), client(audited=False)
    cases = (
        ("Records, search q=oslo", "/console/memory/records/", {"q": "oslo", "realm": REALM}),
        ("Records, first page", "/console/memory/records/", {"realm": REALM}),
        ("a quarantined record", f"/console/memory/records/{quarantined}/", {"realm": REALM}),
    )
    rows: list[Row] = []
    before = AuditEntry.objects.count()
    for name, path, params in cases:
        samples: dict[str, list[float]] = {"on": [], "off": []}
        for rep in range(args.reps + 5):
            for mode in (("on", "off") if rep % 2 else ("off", "on")):
                if mode == "on":
                    receivers.connect()
                else:
                    receivers.disconnect()
                started = time.perf_counter()
                response = (on if mode == "on" else off).get(path, params)
                elapsed = (time.perf_counter() - started) * 1000
                close_old_connections()
                assert response.status_code == 200, (path, response.status_code)
                if rep >= 5:  # warm-up
                    samples[mode].append(elapsed)
        on_row, off_row = Row(name, "audit on", samples["on"]), Row(name, "audit off", samples["off"])
        on_row.note = f"{on_row.median - off_row.median:+.2f} ms at p50"
        rows += [off_row, on_row]
    receivers.connect()
    audit_flush()
    rows += entry_costs(reps=args.reps)
    print_table(rows)
    print(f"\naudit entries written by the run: {AuditEntry.objects.count() - before:,}")


def entry_costs(*, reps: int) -> list[Row]:
    """The audit log's own share, without a page around it: queueing one entry (what an audited
    request pays), and writing one before going on (what a quarantined body read pays)."""
    from mobkit_console.audit.services import audit_entry, audit_flush, audit_record, audit_write_now

    batch = 1000
    queued = []
    for _ in range(reps):
        started = time.perf_counter()
        for _ in range(batch):
            audit_record(action="records.search", realm=REALM, detail={"query": "oslo", "surface": "page"})
        queued.append((time.perf_counter() - started) * 1000 / batch)
        audit_flush()
    written = []
    for _ in range(reps):
        started = time.perf_counter()
        audit_write_now([audit_entry(action="quarantine.body.read", realm=REALM, target="mem-x")])
        written.append((time.perf_counter() - started) * 1000)
    return [
        Row("the entry alone", "queued (per entry)", queued),
        Row("the entry alone", "written at once", written),
    ]


if __name__ == "__main__":
    main()
