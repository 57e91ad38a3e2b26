"""What the store tells whoever listens, as Django signals: how its indexes and queries fare.

The project's metrics count them (mobkit_console/observability); without a receiver they cost a
look at an empty list. A realm name and counts only, never a record's text or id. Sent with
``send_robust``: a failing receiver never fails a read or a build.
"""

from __future__ import annotations

from django.dispatch import Signal

# kwargs: family (an index family's name), realm, outcome ("ok" | "failed"), seconds.
index_built = Signal()
# kwargs: family, realm, outcome ("current": nothing new, "applied": caught up, "rebuild": only a
# rebuild can help), behind (audit rows the realm held past the index's high-water mark).
index_caught_up = Signal()
# kwargs: realm. A realm query passed MOBKIT_REALM_QUERY_TIMEOUT_MS and SQLite is interrupting it.
realm_query_interrupted = Signal()
