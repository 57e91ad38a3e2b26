"""What the memory domain tells the project, as Django signals (docs/audit-and-oidc.md §2).

The domain knows nothing of who listens. A project that keeps an audit log connects receivers;
a timeline takes a seeded demo's history (docs/demo.md §5); without them the signals go nowhere. ``quarantined_bodies_read`` is the one that may refuse: a
receiver that raises stops the read (``AuditRefused``), so a quarantined body is never shown
unrecorded (fail closed). Record text is never sent: ids, realms, filters and counts only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.dispatch import Signal

from memory_panel.errors import AuditRefused
from memory_panel.visibility import reviewer_only

if TYPE_CHECKING:
    from access.caller import Access
    from memory_panel.store.records import MemoryRecord

# kwargs: access, reads (a list of (realm, record id)). A receiver that raises refuses the read.
quarantined_bodies_read = Signal()
# kwargs: access, action (the grant that was missing), resource (an identity or record id, or None).
access_denied = Signal()
# kwargs: access, realm, format ("csv" | "ndjson"), filters (the query parameters), rows, complete
# (False when the download was cut short). Sent once the download ends.
records_exported = Signal()
# kwargs: access, realm, query (the search text the caller typed), surface ("page" | "rpc").
records_searched = Signal()
# kwargs: realms (the names seed_demo just wrote). A receiver answers with a line for the operator.
demo_realms_seeded = Signal()


def require_body_read_recorded(*, access: Access, records: Iterable[MemoryRecord]) -> None:
    """Record every reviewer-only body about to be shown; ``AuditRefused`` when that fails."""
    reads = [(record.realm, record.id) for record in records if reviewer_only(record)]
    if not reads:
        return
    try:
        quarantined_bodies_read.send(sender=None, access=access, reads=reads)
    except Exception as failure:  # any receiver failure: the body stays unshown
        raise AuditRefused() from failure


def announce(signal: Signal, **kwargs: Any) -> None:
    """Send a signal whose receivers may not stop the request: a failing receiver is their business."""
    signal.send_robust(sender=None, **kwargs)
