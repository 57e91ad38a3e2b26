"""Facets benchmark (docs/realm-index.md §11): the Records facets at a million records, the realm untouched.

    .venv/bin/python bench/facets.py [--records 1000000] [--keep DIR] [--reps 20]
    .venv/bin/python bench/facets.py --small-realms 500 [--reps 10]    # many small realms instead

Seeds a realm with ``seed_demo`` unless ``--keep DIR`` already holds one (bench/scale.py's layout,
so one seeded directory serves scale.py, search.py and this), builds the console's search index
(timed: its facet counters are filled by the build) and its realm index afresh (timed, with each
index's size against the realm file's: the realm index keeps the author kind the Records filter
compares), then asks
``/console/memory/records/facets.json`` through the real endpoint (Django's test client, a
signed-in user, the full middleware stack), unfiltered, filtered and with search queries, as an
admin and as a reader granted one agent (the counters' visibility per scope), and prints p50/p95
with which fields timed out. Then five writes through the store writer, each followed by the
facets request that catches the counters up. The realm file's sha256, size and mtime are compared
before and after the reads (the bench's own writes come after that).

``--small-realms N`` instead writes N realms of ``--records-each`` plain notes (a console of many
small realms, their counters kept by the console-wide index) and times the all-realm facets, cold
(the console-wide index filled with every realm inside the request, its size printed against the
realms') and warm.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import REALM, Row, configure_django, fingerprint, print_table, seed_if_missing, timed  # noqa: E402

FACETS = "/console/memory/records/facets.json"
ASKS = (
    ("unfiltered", {}),
    ("status=active", {"status": "active"}),
    ("kind=fact, trust=agent_observed", {"kind": "fact", "trust": "agent_observed"}),
    ("identity=identity:luka", {"identity": "identity:luka"}),
    ("author=operator", {"author": "operator"}),
    ("search: rare word 5953", {"q": "5953"}),
    ("search: common word oslo", {"q": "oslo"}),
    ("search: very common word planning", {"q": "planning"}),
    ("search + status=active: oslo", {"q": "oslo", "status": "active"}),
    ("search + author=agent: oslo", {"q": "oslo", "author": "agent"}),
)
ONE_AGENT = """enabled = true
admins = ["root@example.test"]

[[rules]]
id = "luka-only"
actions = ["agent.view", "agent.memory.read"]
agents = ["identity:luka"]
"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="persistent-state directory kept between runs (reused if seeded)")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--small-realms", type=int, default=0, help="N small realms instead of one large one")
    parser.add_argument("--records-each", type=int, default=2000, help="records in each small realm")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    state = args.keep.absolute() if args.keep else Path(tempfile.mkdtemp(prefix="mobkit-facets-state-"))
    scratch = Path(tempfile.mkdtemp(prefix="mobkit-facets-console-"))
    configure_django(state, scratch / "console.sqlite3")
    if args.small_realms:
        small_realms(state, args)
        return

    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    from memory_panel.store import realm_index as realm_module, search_index as search_module
    from memory_panel.store.realms import realm_path

    realm_file = realm_path(REALM)
    seed_if_missing(realm_file, args.records)
    before = fingerprint(realm_file)
    call_command("migrate", verbosity=0)
    started = time.monotonic()
    if search_module.SEARCH_INDEX.newest(REALM) is None or not _has_counters(search_module, REALM):
        search_module.SEARCH_INDEX.build(REALM)
        print(f"search index (with its facet counters) built in {time.monotonic() - started:.1f} s")
    _build_realm_index(realm_module, realm_file)
    realm_bytes = realm_file.stat().st_size
    for name, family in (("realm index", realm_module.REALM_INDEX), ("search index", search_module.SEARCH_INDEX)):
        size = family.newest(REALM).stat().st_size
        print(f"{name}: {size / 2**20:,.0f} MiB, {size / realm_bytes:.1%} of the realm file")

    def asked(client: Client, params: dict) -> dict:
        reply = client.get(FACETS, params)
        connections.close_all()
        assert reply.status_code == 200, reply.content[:300]
        return reply.json()

    rows: list[Row] = []
    for who, toml in (("admin", None), ("reader granted one agent", ONE_AGENT)):
        if toml is None:
            settings.MOBKIT_ACCESS_CONFIG = None
            subject = "bench"
        else:
            path = scratch / "access.toml"
            path.write_text(toml, encoding="utf-8")
            settings.MOBKIT_ACCESS_CONFIG = str(path)
            subject = "luka-reader@example.test"
        client = Client()
        client.force_login(User.objects.get_or_create(username=subject, email=subject)[0])
        for label, params in ASKS:
            reply = asked(client, params)
            rows.append(Row(who, label, timed(lambda c=client, p=params: asked(c, p), args.reps),
                            note=_note(reply)))
    settings.MOBKIT_ACCESS_CONFIG = None
    rows += _author_pages(realm_file, args.reps)
    unchanged = fingerprint(realm_file) == before  # before the bench's own writes below
    rows.append(_catch_up_row(realm_file, asked))
    print_table(rows)
    print(f"\nrealm file unchanged by the console's reads: {unchanged}")


def small_realms(state: Path, args: argparse.Namespace) -> None:
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    from tests.support.worlds import write_spread

    root = state / "agent-memory"
    root.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    for n in range(args.small_realms):
        if not (root / f"small-{n:04d}.sqlite3").exists():
            write_spread(root, f"small-{n:04d}", args.records_each, 8)
    print(f"{args.small_realms} realms of {args.records_each:,} records ready in {time.monotonic() - started:.0f} s")
    call_command("migrate", verbosity=0)
    client = Client()
    client.force_login(User.objects.get_or_create(username="bench")[0])

    def asked(params: dict) -> dict:
        reply = client.get(FACETS, params)
        connections.close_all()
        assert reply.status_code == 200, reply.content[:300]
        return reply.json()

    from memory_panel.store.all_realms_index import index_path

    for stale in index_path().parent.glob(index_path().name + "*"):  # cold: an earlier run's file (and WAL) gone
        stale.unlink()
    rows = [Row("all realms", "unfiltered, cold (the console-wide index filled)", timed(lambda: asked({}), 1, 0))]
    realms_bytes = sum(path.stat().st_size for path in root.glob("*.sqlite3"))

    def kept(when: str) -> None:
        size = index_path().stat().st_size
        print(f"console-wide index {when}: {size / 2**20:,.0f} MiB, {size / realms_bytes:.1%} of the realms' files")

    kept("after the first page")
    for label, params in (("unfiltered", {}), ("status=active", {"status": "active"}),
                          ("search: agent noted", {"q": "agent noted"})):
        reply = asked(params)
        rows.append(Row("all realms", label, timed(lambda p=params: asked(p), args.reps), note=_note(reply)))
    kept("with the search documents too")
    print_table(rows)


def _build_realm_index(realm_module, realm_file: Path) -> None:
    """A realm index built afresh (an earlier run's removed), timed in wall and this process's CPU."""
    shutil.rmtree(realm_module.REALM_INDEX.directory(REALM), ignore_errors=True)
    wall, cpu = time.monotonic(), time.process_time()
    realm_module.REALM_INDEX.build(REALM)
    print(f"realm index built in {time.monotonic() - wall:.1f} s ({time.process_time() - cpu:.1f} s CPU)")


def _author_pages(realm_file: Path, reps: int) -> list[Row]:
    """The Records page under the author filter (the realm index's row filter), first and 90% deep
    among that author kind's rows, for the commonest and the rarest author kind of the realm."""
    import sqlite3

    from django.contrib.auth.models import User
    from django.db import connections
    from django.test import Client

    from memory_panel.store.records import AUTHOR_KIND

    client = Client()
    client.force_login(User.objects.get_or_create(username="bench")[0])
    with sqlite3.connect(f"file:{realm_file}?mode=ro", uri=True) as conn:
        kinds = conn.execute(f"SELECT {AUTHOR_KIND}, COUNT(*) FROM records r GROUP BY 1 ORDER BY 2 DESC").fetchall()
        asks = []
        for kind, total in (kinds[0], kinds[-1]):
            deep = conn.execute(
                f"SELECT updated_at_ms, memory_id FROM records r WHERE {AUTHOR_KIND} = ?"
                " ORDER BY updated_at_ms DESC, memory_id DESC LIMIT 1 OFFSET ?", (kind, int(total * 0.9))).fetchone()
            asks += [(f"author={kind} ({total:,} rows), first page", {"author": kind}),
                     (f"author={kind}, 90% deep", {"author": kind, "cursor": f"{deep[0]}:{deep[1]}"})]

    def page(params: dict) -> None:
        reply = client.get("/console/memory/records/", {"realm": REALM, **params})
        connections.close_all()
        assert reply.status_code == 200, reply.content[:300]

    return [Row("records page", label, timed(lambda p=params: page(p), reps)) for label, params in asks]


def _has_counters(search_module, realm: str) -> bool:
    index = search_module.search_index(realm)
    return index is not None and index.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'facet_counts'").fetchone() is not None


def _note(reply: dict) -> str:
    total = sum(item["count"] for item in reply["facets"]["status"])
    timed_out = reply["timed_out"]
    return f"timed out: {', '.join(timed_out)}" if timed_out else f"{total:,} rows counted"


def _catch_up_row(realm_file: Path, asked) -> Row:
    """One record written by the store writer, then the facets request that catches the counters up."""
    from django.contrib.auth.models import User
    from django.test import Client

    from memory_panel.simulator.store_writer import APPLICATION, StoreWriter, create_op, identity_scope, new_record

    client = Client()
    client.force_login(User.objects.get_or_create(username="bench")[0])
    samples = []
    for n in range(5):
        with StoreWriter.open(REALM, root=realm_file.parent) as writer:
            record = new_record(kind="fact", title=f"Facet bench write {n}", body="counted at once")
            writer.bulk_apply([create_op(identity_scope(REALM, "identity:luka"), record)], author=APPLICATION)
        started = time.perf_counter()
        asked(client, {})
        samples.append((time.perf_counter() - started) * 1000)
    return Row("after a write", "unfiltered, counters caught up in the request", samples, note="5 writes")


if __name__ == "__main__":
    main()
