"""What the access engine tells listeners (an audit log): a reloaded access.toml, by rule id."""

from __future__ import annotations

from django.dispatch import Signal

from .engine import AccessConfig

# kwargs: added, removed (sorted rule ids), revision (of the config now in force).
access_config_reloaded = Signal()


def announce_reload(*, previous: AccessConfig, current: AccessConfig, revision: str) -> None:
    """Tell listeners which rule ids a reload added and removed; a failing listener stops nothing."""
    before = {rule.id for rule in previous.rules}
    after = {rule.id for rule in current.rules}
    access_config_reloaded.send_robust(
        sender=None, added=sorted(after - before), removed=sorted(before - after), revision=revision
    )
