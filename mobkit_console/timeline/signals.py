"""What the realm follower tells listeners: the lease holder has just polled the realm files."""

from __future__ import annotations

from django.dispatch import Signal

# Sent by the watcher lease's holder after each poll, with kwarg ``stored`` (the events it stored):
# work that must run in exactly one process of a deployment (alert evaluation) listens here.
realms_followed = Signal()
