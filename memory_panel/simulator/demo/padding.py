"""Generated notes that pad the main demo realm up to ``seed_demo --records N``, for load tests."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from memory_panel.simulator.demo.cast import DAY_MS, IDENTITIES, MOB
from memory_panel.simulator.demo.phrases import DAYS, FACTS, PEOPLE, SUBJECTS, TAGS
from memory_panel.simulator.store_writer import (
    APPLICATION,
    ManualClock,
    StoreWriter,
    create_op,
    identity_scope,
    mob_scope,
    new_record,
    realm_scope,
)

def _pad_ops(realm: str, count: int, start_ms: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(20260101)
    scopes = [identity_scope(realm, i) for i in IDENTITIES] + [mob_scope(realm, MOB), realm_scope(realm)]
    kinds = ("preference", "fact", "gotcha", "procedure", "relationship", "open_loop", "reference")
    for n in range(count):
        subject = rng.choice(SUBJECTS)
        fact = rng.choice(FACTS).format(day=rng.choice(DAYS), person=rng.choice(PEOPLE),
                                             n=rng.randint(2, 40))
        title = f"{subject[0].upper()}{subject[1:]} {fact} (note {n + 1})"
        body = (f"Noted while planning: {subject} {fact}. {rng.choice(PEOPLE)} confirmed it on "
                f"{rng.choice(DAYS)}; revisit if {subject} changes owner.")
        at = start_ms + n
        yield create_op(rng.choice(scopes), new_record(kind=rng.choice(kinds), title=title, body=body,
                                                       tags=rng.sample(TAGS, 2)),
                        created_at_ms=at, updated_at_ms=at)


def pad(w: StoreWriter, clock: ManualClock, count: int, progress: Callable[[int], None] | None) -> None:
    """``count`` notes older than the story (they fill the months before it), one ms apart."""
    start = clock() - 120 * DAY_MS
    w.bulk_apply(_pad_ops(w.realm, count, start), author=APPLICATION,
                 on_chunk=(lambda receipt: progress(receipt.applied_ops)) if progress else None)
