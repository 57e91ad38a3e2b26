"""A realm written on known days, and the tests' own account of what each day holds (docs/charts.md §2)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_panel.simulator.store_writer import agent, identity_scope, operator_scope, set_rank_op
from tests.support.postures import LUKA, SCOUT
from tests.support.worlds import RealmWriterFactory
from tests.support.written import T0

DAY_MS = 86_400_000
# Noon of T0's day: every write of a day lands well inside it.
NOON = T0 // DAY_MS * DAY_MS + DAY_MS // 2
FIRST_DAY = T0 // DAY_MS
OPERATOR_SCOPE = ("operator", "oncall")
REVIEWER = {"kind": "operator", "principal": "reviewer@example.test"}


@dataclass
class Account:
    """What was written, per day: records events ``(day, scope, event, reviewer_only)``, injections
    ``(day, surface, identity, record scope)``, and the record ids by name."""

    events: list[tuple[int, tuple[str, str], str, bool]] = field(default_factory=list)
    injections: list[tuple[int, str, str, tuple[str, str]]] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)


def write_dated_realm(realm_writer: RealmWriterFactory) -> Account:
    """Three days of one realm ``dated``; see each day's comment for what it holds."""
    writer = realm_writer("dated")
    clock, account = realm_writer.clock, Account()
    scout, luka, oncall = identity_scope("dated", SCOUT), identity_scope("dated", LUKA), operator_scope("dated", "oncall")
    S, L, O = ("identity", SCOUT), ("identity", LUKA), OPERATOR_SCOPE

    def day(n: int) -> None:
        clock.set(NOON + n * DAY_MS)

    def note(n: int, scope, event: str, reviewer_only: bool = False) -> None:
        account.events.append((FIRST_DAY + n, scope, event, reviewer_only))

    # Day 0: three scout records, two of luka's, one operator record, one quarantined write for luka.
    day(0)
    for name, scope, key in [("a", scout, S), ("b", scout, S), ("c", scout, S), ("d", luka, L), ("e", luka, L), ("f", oncall, O)]:
        account.ids[name] = writer.remember(scope, f"title {name}", f"body of {name}")
        note(0, key, "created")
    account.ids["q1"] = writer.remember(luka, "quarantined one", "scraped text one", gate_reason="tainted session", author=agent(LUKA))
    note(0, L, "quarantined", True)
    # Day 1: a superseded (its successor created), d forgotten, a quarantined write for scout, and injections.
    day(1)
    writer.supersede(account.ids["a"], "title a2", "body of a, second version")
    note(1, S, "created")
    note(1, S, "superseded")
    writer.forget(account.ids["d"])
    note(1, L, "tombstoned")
    account.ids["q2"] = writer.remember(scout, "quarantined two", "scraped text two", gate_reason="tainted session", author=agent(SCOUT))
    note(1, S, "quarantined", True)
    for _ in range(3):
        writer.record_injection(account.ids["b"], SCOUT, surface="build")
        account.injections.append((FIRST_DAY + 1, "build", SCOUT, S))
    writer.record_injection(account.ids["e"], LUKA, surface="turn")
    account.injections.append((FIRST_DAY + 1, "turn", LUKA, L))
    # Day 2: q1 released (a readable successor, the origin tombstoned), q2 tombstoned by review,
    # an operator record injected to luka, and one dream run that re-ranked c.
    day(2)
    writer.review_quarantine(account.ids["q1"], "release", reviewer=REVIEWER)
    note(2, L, "created")
    note(2, L, "released", True)
    writer.review_quarantine(account.ids["q2"], "tombstone", reviewer=REVIEWER)
    note(2, S, "rejected", True)
    writer.record_injection(account.ids["f"], LUKA, surface="turn")
    account.injections.append((FIRST_DAY + 2, "turn", LUKA, O))
    run_id = writer.new_dream_run_id()
    writer.steward_batch(run_id, [set_rank_op(account.ids["c"], 1)])
    writer.record_dream_run(run_id, started_at_ms=NOON + 2 * DAY_MS - 1000, ops_committed=1)
    return account
