"""A rule of the alert rules file once checked, and the set of them in force (docs/alerts.md §1)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

DEFAULT_COOLDOWN_S = 600


@dataclass(frozen=True)
class AlertRule:
    id: str
    when: str
    notify: tuple[str, ...]
    realms: tuple[str, ...] = ()  # empty: every realm
    threshold: float | None = None
    window_s: int | None = None
    cooldown_s: int = DEFAULT_COOLDOWN_S
    as_subject: str | None = None
    tile: str | None = None  # tile.violated: which verdict tile
    identity: str | None = None  # quarantine.arrived: only writes into this identity's scope
    tainted_only: bool = False  # quarantine.arrived: only writes a tainted session made
    line: int = 0

    def covers(self, realm: str | None) -> bool:
        return not self.realms or realm in self.realms

    @property
    def watches(self) -> str:
        """What the rule observes. An edit that changes it makes another rule of the same id, whose
        open alerts close; a threshold, window, cooldown, realm or receiver edit does not (docs/alerts.md §2)."""
        return json.dumps([self.when, self.tile, self.identity, self.tainted_only])


@dataclass(frozen=True)
class AlertRules:
    rules: tuple[AlertRule, ...] = ()
    revision: str = "0"  # short sha256 of the file's bytes; "0" without a file
    path: str | None = None
    by_id: dict[str, AlertRule] = field(default_factory=dict, compare=False, repr=False)


NO_RULES = AlertRules()
