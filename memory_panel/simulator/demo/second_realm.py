"""The smaller second demo realm (``team:blue`` by default, whose file name needs percent-encoding)."""

from __future__ import annotations

from memory_panel.simulator.demo.cast import TAINT_WEB
from memory_panel.simulator.store_writer import ManualClock, StoreWriter, agent, identity_scope, mob_scope


def write_second_realm(w: StoreWriter, clock: ManualClock) -> None:
    """The blue team: a superseded standup time, a reviewer's habit, a runbook, one tainted claim."""
    r = w.realm
    kai, noor = identity_scope(r, "identity:kai"), identity_scope(r, "identity:noor")
    first = w.remember(kai, "Standup moved to 09:30", "The blue team's standup moved from 09:00 to 09:30 "
                       "so the Lisbon half can join after school drop-off.", kind="fact", tags=["team"])
    clock.advance(3_600_000)
    w.supersede(first, "Standup is at 09:30 except Fridays", "Fridays the standup is async in #blue-standup.")
    clock.advance(3_600_000)
    w.remember(noor, "Noor reviews infra PRs on Thursdays", "Noor batches infrastructure reviews on "
               "Thursday mornings; ping her before Wednesday evening.", kind="relationship",
               author=agent("identity:noor"))
    clock.advance(3_600_000)
    w.remember(mob_scope(r, "blue"), "Blue team's runbook lives in the wiki",
               "The blue team runbook is wiki/blue/runbook; the old Google Doc is read-only.", kind="reference")
    clock.advance(3_600_000)
    w.remember(noor, "Terraform state bucket is shared with staging",
               "A forum thread claims the prod and staging Terraform state share one bucket.",
               kind="gotcha", author=agent("identity:noor"), gate_reason=TAINT_WEB)
