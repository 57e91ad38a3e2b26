"""Which records turned DEAD when, as the evaluator saw them (``records.dead``, docs/alerts.md §2)."""

from __future__ import annotations

from .models import DeadSighting

BASELINE = ""  # the memory_id of a realm's marker row: its DEAD records at the first check are old news


def dead_sightings(*, realm: str, dead: list[str], now_ms: int, since_ms: int) -> list[str]:
    """Record ``dead`` (the realm's DEAD records now) and return those first seen after ``since_ms``,
    oldest first. Runs inside the evaluator's tick, so it commits with the alert it opens."""
    known = dict(DeadSighting.objects.filter(realm=realm).values_list("memory_id", "first_seen_ms"))
    first_check = BASELINE not in known
    seen_at = 0 if first_check else now_ms
    current = set(dead)
    DeadSighting.objects.bulk_create(
        [DeadSighting(realm=realm, memory_id=memory_id, first_seen_ms=seen_at) for memory_id in current - known.keys()]
        + ([DeadSighting(realm=realm, memory_id=BASELINE, first_seen_ms=0)] if first_check else []),
        ignore_conflicts=True,
    )
    gone = [memory_id for memory_id in known if memory_id != BASELINE and memory_id not in current]
    if gone:
        DeadSighting.objects.filter(realm=realm, memory_id__in=gone).delete()
    turned = [(known.get(memory_id, seen_at), memory_id) for memory_id in current]
    return [memory_id for at, memory_id in sorted(turned) if at > since_ms]
