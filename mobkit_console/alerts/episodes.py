"""When a key's alert opens, stays quiet or resolves (docs/alerts.md §2): one pure decision shared by
the live evaluator, which stores it, and the 7-day preview, which only counts it — so the preview is
what the evaluator would have done, cooldown included."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class KeyState:
    """What the decision needs of one rule and key: an ``AlertState`` row, or the preview's copy."""

    firing: bool = False
    notified: bool = False  # the open episode's firing notice was sent (not held by cooldown)
    last_notified_ms: int = 0


class Transition(NamedTuple):
    key: str
    opened: bool  # False: resolved
    notify: bool  # a notice is owed: a firing one past the cooldown, or the resolved one of a notified episode
    after: KeyState


def transitions(*, firing: Iterable[str], states: Mapping[str, KeyState], now: int,
                cooldown_s: int) -> list[Transition]:
    """Each key newly firing opens (quietly within ``cooldown_s`` of its last notice); each key that
    was firing and no longer is resolves. Keys already firing and still firing change nothing."""
    firing = set(firing)
    out = []
    for key in sorted(firing):
        prior = states.get(key, KeyState())
        if prior.firing:
            continue
        quiet = bool(prior.last_notified_ms) and now - prior.last_notified_ms < cooldown_s * 1000
        out.append(Transition(key, True, not quiet,
                              KeyState(True, not quiet, prior.last_notified_ms if quiet else now)))
    for key, prior in sorted(states.items()):
        if prior.firing and key not in firing:
            out.append(Transition(key, False, prior.notified,
                                  KeyState(False, prior.notified, prior.last_notified_ms)))
    return out
