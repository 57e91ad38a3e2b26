"""What the access engine tells listeners (an audit log): a reloaded access.toml, by rule id."""

from __future__ import annotations

from django.dispatch import Signal

# Sent once a changed access.toml is whole, stable and applied (access/config.py), with kwargs
# added, removed, changed (sorted rule ids) and revision (of the config now in force).
access_config_reloaded = Signal()
