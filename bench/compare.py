"""Two realms compared by logical key at a million records each (docs/history.md §6).

    .venv/bin/python bench/compare.py --keep DIR [--drift 1000] [--reps 10]

``DIR`` is a state directory that ``bench/history.py --keep DIR`` seeded (realm ``default``). The
first run copies that realm into a second one, ``drifted``, with SQLite's backup API, and writes
to the copy through the store writer, as a replica that drifted from its source: ``--drift``
records superseded with another body, as many tombstoned and as many new ones. Then it times,
through the real endpoint (Django's test client, a signed-in user, every middleware):

- the comparison's first page cold (the first request of this process: both realms read), warm
  (the differences kept while neither file moves), and after one more write to the copy;
- the second page of one list (its cursor), and the NDJSON export of every difference;
- the same at a moment (``as_of``) just before the drift, cold and warm: the history files are
  built first, as a page at a moment would have them.
"""

from __future__ import annotations

import argparse
import html
import re
import sqlite3
import sys
import time
from pathlib import Path
from urllib.parse import parse_qsl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from history import iso, once  # noqa: E402
from scale import REALM, Row, configure_django, print_table, timed  # noqa: E402

DRIFTED = "drifted"
CHANGES = "/console/memory/changes/"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, required=True, help="a state directory bench/history.py --keep seeded")
    parser.add_argument("--drift", type=int, default=1000, help="records changed, tombstoned and added on the copy")
    parser.add_argument("--reps", type=int, default=10)
    return parser.parse_args()


def drift(source: Path, copy: Path, records: int) -> int:
    """Copy ``source`` to ``copy`` and make it drift; returns the moment just before the drift."""
    from memory_panel.simulator.store_writer import StoreWriter, identity_scope

    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as conn, sqlite3.connect(copy) as target:
        conn.backup(target)
        before_ms = conn.execute("SELECT MAX(applied_at_ms) FROM audit").fetchone()[0] + 1000
        # Every 97th active record, spread over the scopes; 2 × records of them.
        picked = conn.execute("SELECT memory_id, title, body FROM records WHERE status_kind = 'active'"
                              " AND rowid % 97 = 0 LIMIT ?", (2 * records,)).fetchall()
    started = time.monotonic()
    with StoreWriter.open(DRIFTED, root=copy.parent) as writer:
        for memory_id, title, body in picked[:records]:
            writer.supersede(memory_id, title, body + " (edited on the replica)")
        for memory_id, _, _ in picked[records:]:
            writer.forget(memory_id)
        replica = identity_scope(DRIFTED, "identity:replica")
        for n in range(records):
            writer.remember(replica, f"Replica-only note {n}", f"Written on the replica only, number {n}.")
    print(f"drifted a copy of {source.name} by {records:,} × 3 records in {time.monotonic() - started:.0f} s")
    return before_ms


def main() -> None:
    args = parse_args()
    configure_django(args.keep, args.keep / "console.sqlite3")

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from memory_panel.simulator.store_writer import StoreWriter, identity_scope
    from memory_panel.store import history_file
    from memory_panel.store.realms import realm_path

    call_command("migrate", verbosity=0)
    source = realm_path(REALM)
    copy = source.with_name(source.name.replace(REALM, DRIFTED, 1))
    moment_file = copy.with_name(copy.name + ".before-drift")
    if not copy.exists():
        moment_file.write_text(str(drift(source, copy, args.drift)))
    before = iso(int(moment_file.read_text()))

    user = get_user_model().objects.get_or_create(username="admin")[0]
    client = Client()
    client.force_login(user)

    def get(params: dict[str, str], path: str = CHANGES) -> str:
        response = client.get(path, {"realm": DRIFTED, "against": REALM, **params})
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert response.status_code == 200, (path, response.status_code, re.findall(r"<p[^>]*>([^<]*)", body.decode())[:6])
        return body.decode()

    def second_page(params: dict[str, str]) -> dict[str, str]:
        page = get({**params, "list": "differing"})
        more = page.split('id="compare-more-differing" href="?', 1)[1].split('"', 1)[0]
        return dict(parse_qsl(html.unescape(more)))

    rows = []
    for label, params in (("now", {}), ("as of before the drift", {"as_of": before})):
        if params:
            for name in (REALM, DRIFTED):
                started = time.perf_counter()
                history_file.HISTORY.catch_up(name)
                rows.append(Row("compare", f"history file of {name} caught up", [(time.perf_counter() - started) * 1000]))
        rows.append(Row("compare", f"first page, {label} (cold)", once(lambda: get(params))))
        rows.append(Row("compare", f"first page, {label} (warm)", timed(lambda: get(params), args.reps)))
        print(f"{label}:", ", ".join(re.findall(r'<span data-count="[a-z_]+">([^<]*)</span>', get(params))))
        if not params:
            with StoreWriter.open(DRIFTED, root=copy.parent) as writer:
                writer.remember(identity_scope(DRIFTED, "identity:replica"), f"One more {time.time_ns()}", "Written now.")
            time.sleep(1.1)  # a file written within the last second is never kept for (realm_memo)
            rows.append(Row("compare", f"first page, {label}, after one more write", once(lambda: get(params))))
            paged = second_page(params)
            rows.append(Row("compare", f"second page of one list, {label} (warm)", timed(lambda: get(paged), args.reps)))
            rows.append(Row("compare", f"NDJSON of every difference, {label} (warm)",
                            timed(lambda: get(params, "/console/memory/changes.ndjson"), args.reps)))
    print_table(rows)


if __name__ == "__main__":
    main()
