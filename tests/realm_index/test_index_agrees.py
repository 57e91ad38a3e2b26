"""The console's realm index must agree with the realm table: same pages, same holdings, always."""

from __future__ import annotations

import os
import random
import shutil

import pytest
from memory_panel.store.realms import forget_realm_connections, realm_path

from memory_panel.store import realm_index as index_module
from memory_panel.store.realm_index import build, realm_index
from memory_panel.store.record_filter import RecordFilter
from memory_panel.selectors.biography import supersede_chain
from memory_panel.selectors.holdings import scope_holdings
from memory_panel.selectors.quarantine import quarantine_queue
from memory_panel.selectors.records import record_list
from memory_panel.simulator.store_writer import (
    agent,
    identity_scope,
    mob_scope,
    operator_scope,
    realm_scope,
)
from access.caller import Access, Caller, access_for
from tests.support.postures import TWO_AGENTS_AND_MOBS

pytestmark = pytest.mark.django_db

OPEN = Access(subject="ops", groups=frozenset(), enforced=False, is_admin=False)
IDENTITIES = ("identity:luka", "identity:ana", "identity:router")


@pytest.fixture
def indexed(settings):
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False


def _status(writer, memory_id: str) -> str:
    return writer.conn.execute("SELECT status_kind FROM records WHERE memory_id=?", (memory_id,)).fetchone()[0]


def _random_history(writer, rng: random.Random, batches: int) -> None:
    """Remember, supersede (some quarantined), forget and retier at random, with clock ties."""
    realm = writer.realm
    scopes = [identity_scope(realm, i) for i in IDENTITIES] + [
        mob_scope(realm, "ops"),
        operator_scope(realm, "oncall"),
        realm_scope(realm),
    ]
    live: list[str] = []
    for step in range(batches):
        if rng.random() < 0.6:
            writer.clock.advance(rng.choice([0, 1, 7]))
        roll = rng.random()
        if roll < 0.5 or not live:
            scope = rng.choice(scopes)
            quarantined = scope["scope"] == "identity" and rng.random() < 0.2
            live.append(
                writer.remember(
                    scope,
                    f"Observation {step}",
                    f"Body {step} " + "x" * rng.randint(0, 40),
                    kind=rng.choice(["fact", "preference", "gotcha"]),
                    **({"author": agent(scope["identity"])} if quarantined else {}),
                    gate_reason="session tainted by web tool 'web_fetch'" if quarantined else None,
                )
            )
        elif roll < 0.8:
            prior = rng.choice(live)
            if _status(writer, prior) == "active":
                live.append(writer.supersede(prior, f"Revised {step}", f"Revised body {step}"))
        else:
            target = rng.choice(live)
            if _status(writer, target) != "tombstoned":
                writer.forget(target)


def _walk(*, realm, filters, limit, access=OPEN) -> list[tuple[int, str]]:
    seen: list[tuple[int, str]] = []
    cursor = None
    for _ in range(10_000):
        page = record_list(access=access, realm=realm, filters=filters, limit=limit, cursor=cursor)
        seen += [(r.updated_at_ms, r.id) for r in page.records]
        cursor = page.next_cursor
        if cursor is None:
            return seen
    raise AssertionError("cursor walk did not end")


FILTERS = [
    RecordFilter(),
    RecordFilter(scope_kind="identity"),
    RecordFilter(scope_kind="identity", scope_key="identity:ana"),
    RecordFilter(status="active"),
    RecordFilter(status="quarantined"),
    RecordFilter(scope_kind="mob", status="superseded"),
    RecordFilter(scope_kind="identity", scope_key="identity:luka", status="tombstoned"),
]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_filtered_walk_through_the_index_equals_the_direct_walk(realm_writer, settings, seed):
    writer = realm_writer("default")
    _random_history(writer, random.Random(seed), 160)
    direct = {(f, limit): _walk(realm="default", filters=f, limit=limit) for f in FILTERS for limit in (1, 7, 50)}
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    build("default")
    assert realm_index("default") is not None
    for (filters, limit), expected in direct.items():
        assert _walk(realm="default", filters=filters, limit=limit) == expected, (filters, limit)


def test_writes_after_the_build_are_listed_by_the_next_request(realm_writer, indexed, settings):
    writer = realm_writer("default")
    rng = random.Random(7)
    _random_history(writer, rng, 40)
    build("default")
    before = _walk(realm="default", filters=RecordFilter(), limit=50)
    _random_history(writer, rng, 40)  # supersedes change their priors too: both must move
    after_index = _walk(realm="default", filters=RecordFilter(), limit=50)
    assert after_index != before
    shutil.rmtree(index_module.index_dir())  # no index at all: the direct query is the reference
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 10**9
    assert after_index == _walk(realm="default", filters=RecordFilter(), limit=50)


def _age_realm_files(path, seconds: float) -> None:
    """As if nothing had written the realm for ``seconds``: its file and -wal times set back."""
    for file in (path, path.with_name(path.name + "-wal")):
        if file.exists():
            stamp = file.stat().st_mtime - seconds
            os.utime(file, (stamp, stamp))


def test_a_write_to_a_realm_quiet_for_a_while_is_listed_by_the_next_request(realm_writer, indexed):
    # A settled realm is not looked at again while its file and -wal stay as they were
    # (docs/realm-index.md §4); any commit moves them, so the next request still lists it.
    writer = realm_writer("default")
    _random_history(writer, random.Random(5), 30)
    build("default")
    path = realm_path("default")
    _age_realm_files(path, 5)
    before = _walk(realm="default", filters=RecordFilter(), limit=50)
    assert before == _walk(realm="default", filters=RecordFilter(), limit=50)  # the settled look, kept
    newest = writer.remember(identity_scope("default", "identity:luka"), "Written after a quiet spell", "body")
    _age_realm_files(path, 5)  # the next request comes when this write has settled too
    after = _walk(realm="default", filters=RecordFilter(), limit=50)
    assert after[0][1] == newest
    assert after[1:] == before


def test_holdings_quarantine_and_claimants_agree_with_the_table(realm_writer, indexed, settings):
    writer = realm_writer("default")
    rng = random.Random(11)
    _random_history(writer, rng, 60)
    build("default")
    _random_history(writer, rng, 60)
    from_index = (
        scope_holdings(access=OPEN, realm="default"),
        quarantine_queue(access=OPEN, realm="default", limit=200),
        [supersede_chain(access=OPEN, realm="default", memory_id=r.id) for r in record_list(
            access=OPEN, realm="default", filters=RecordFilter(), limit=200, cursor=None).records],
    )
    shutil.rmtree(index_module.index_dir())
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 10**9
    direct = (
        scope_holdings(access=OPEN, realm="default"),
        quarantine_queue(access=OPEN, realm="default", limit=200),
        [supersede_chain(access=OPEN, realm="default", memory_id=r.id) for r in record_list(
            access=OPEN, realm="default", filters=RecordFilter(), limit=200, cursor=None).records],
    )
    assert from_index == direct


def test_a_replaced_realm_file_is_never_served_from_the_old_index(realm_writer, agent_memory_dir, indexed):
    first = realm_writer("default")
    first.remember(identity_scope("default", "identity:luka"), "Old file record", "old")
    build("default")
    assert [r.title for r in record_list(access=OPEN, realm="default", filters=RecordFilter(), limit=50, cursor=None).records] == ["Old file record"]
    first.close()
    path = first.path
    replacement = realm_writer("restored")
    replacement.remember(identity_scope("restored", "identity:ana"), "Restored record", "new")
    replacement.close()
    forget_realm_connections()
    for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        leftover.unlink(missing_ok=True)
    shutil.move(replacement.path, path)  # a restore: another inode at the same name
    forget_realm_connections()  # a new request: realm connections do not outlive one
    titles = [r.title for r in record_list(access=OPEN, realm="default", filters=RecordFilter(), limit=50, cursor=None).records]
    assert titles == ["Restored record"]


@pytest.mark.parametrize("limit", [1, 7, 50])
@pytest.mark.parametrize(
    ("filters", "keys"),
    [
        (RecordFilter(), {"identity:luka", "identity:router", "ops"}),
        # A scope key without a scope kind still keeps the walk to that key's scope.
        (RecordFilter(scope_key="identity:luka"), {"identity:luka"}),
    ],
)
def test_a_reader_of_a_few_scopes_walks_the_index_as_the_table(
    realm_writer, settings, access_toml, limit, filters, keys
):
    writer = realm_writer("default")
    _random_history(writer, random.Random(5), 160)
    access_toml(TWO_AGENTS_AND_MOBS)
    reader = access_for(Caller(subject="reader@example.test"))
    direct = _walk(realm="default", filters=filters, limit=limit, access=reader)
    assert direct and {key for _, key in _scopes_of(writer, direct)} <= keys
    settings.MOBKIT_REALM_INDEX_MIN_ROWS = 0
    settings.MOBKIT_REALM_INDEX_BACKGROUND = False
    build("default")
    assert _walk(realm="default", filters=filters, limit=limit, access=reader) == direct


def _scopes_of(writer, keys: list[tuple[int, str]]) -> set[tuple[str, str]]:
    rows = writer.conn.execute(
        f"SELECT scope_kind, scope_key FROM records WHERE memory_id IN ({', '.join('?' * len(keys))})",
        [memory_id for _, memory_id in keys],
    )
    return set(rows)
