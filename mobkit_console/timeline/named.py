"""The records an event names, and what one caller may see of them (docs/access.md §2.8).

An event passes on its visibility key (visibility.py), but the records it names follow the row
rule: a caller who may not read a record (a reviewer-only one, without ``memory.quarantine.review``)
learns neither its title nor its id from the timeline, on the page, in either socket or on the SSE
stream, live or replayed. The event still arrives, with each hidden id set to null.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from channels.db import database_sync_to_async

from memory_panel.selectors.named_records import NamedRecords, RecordRef, named_records, reads_every_record

from .services import envelope_json

if TYPE_CHECKING:
    from access.caller import Access

# docs/store-format.md §6 and docs/timeline.md §T.8: the data fields that hold one record id, and
# those that hold a list of them; a realm-less event names no record the console could look up.
ID_FIELDS = ("record_id", "successor_id", "source_record_id")
ID_LIST_FIELDS = ("flagged_active_records",)

NOTHING_HIDDEN = NamedRecords({}, frozenset())


def named_refs(data: Any) -> tuple[RecordRef, ...]:
    """Every (realm, record id) the event's ``data`` names."""
    if not isinstance(data, dict):
        return ()
    realm = data.get("realm")
    if not isinstance(realm, str) or not realm:
        return ()
    ids = [data.get(name) for name in ID_FIELDS]
    for name in ID_LIST_FIELDS:
        if isinstance(listed := data.get(name), list):
            ids += listed
    return tuple(dict.fromkeys((realm, value) for value in ids if isinstance(value, str) and value))


def events_named(envelopes: Sequence[dict[str, Any]], *, access: Access, titles: bool) -> NamedRecords:
    """What ``access`` may see of the records ``envelopes`` name; ``titles`` when the page shows them."""
    if not titles and reads_every_record(access):
        return NOTHING_HIDDEN
    refs = [ref for envelope in envelopes for ref in named_refs(envelope.get("data"))]
    return named_records(access=access, refs=refs) if refs else NOTHING_HIDDEN


def as_seen(envelope: dict[str, Any], hidden: frozenset[RecordRef]) -> dict[str, Any]:
    """``envelope`` with the ids of ``hidden`` records set to null (list entries dropped)."""
    data = envelope.get("data")
    if not hidden or not any(ref in hidden for ref in named_refs(data)):
        return envelope
    realm = data["realm"]
    seen = dict(data)
    for name in ID_FIELDS:
        if (realm, seen.get(name)) in hidden:
            seen[name] = None
    for name in ID_LIST_FIELDS:
        if isinstance(listed := seen.get(name), list):
            seen[name] = [value for value in listed if (realm, value) not in hidden]
    return {**envelope, "data": seen}


@lru_cache(maxsize=4096)
def _parsed(text: str) -> tuple[dict[str, Any], tuple[RecordRef, ...]]:
    # Keyed by the envelope's JSON text, which a tick's frames share across every stream.
    envelope = json.loads(text)
    return envelope, named_refs(envelope.get("data"))


def texts_as_seen(texts: Sequence[str], *, access: Access) -> list[str]:
    """Envelopes as JSON text, each as this caller may see it (unchanged when it hides nothing)."""
    parsed = [_parsed(text) for text in texts]
    refs = [ref for _, named in parsed for ref in named]
    if not refs:
        return list(texts)
    hidden = named_records(access=access, refs=refs).hidden
    return [text if not any(ref in hidden for ref in named) else envelope_json(as_seen(envelope, hidden))
            for text, (envelope, named) in zip(texts, parsed)]


async def texts_for(texts: Sequence[str], *, access: Access) -> list[str]:
    """``texts_as_seen`` off the event loop (a look-up reads realm files), and not at all when the
    caller reads every record."""
    if reads_every_record(access) or not any(_parsed(text)[1] for text in texts):
        return list(texts)
    return await database_sync_to_async(texts_as_seen)(texts, access=access)
