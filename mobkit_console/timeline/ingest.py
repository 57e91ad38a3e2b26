"""Validating an ingest body: one envelope or an array of them, all good or all refused."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mobkit_console.jsonbody import JsonBodyError, json_loads_strict

from .events import EVENT_TYPES

MAX_BATCH = 1000
MAX_DATA_BYTES = 64 * 1024
MAX_IDENTITY_CHARS = 256
MAX_ID_CHARS = 200
_U63 = 2**63  # timestamp_ms is a u64 in MobKit; the console stores a signed 64-bit integer


class IngestError(ValueError):
    """A refused body; the message names the first bad field, e.g. ``events[2].timestamp_ms``."""


@dataclass(frozen=True)
class IncomingEvent:
    source_event_id: str | None
    identity: str
    event_type: str
    timestamp_ms: int
    data: dict[str, Any]
    interaction_id: str | None


def parse_ingest_body(raw: bytes) -> list[IncomingEvent]:
    try:
        body = json_loads_strict(raw)
    except JsonBodyError as error:
        raise IngestError(f"{error.field(single='event', batch='events')}: {error.problem}") from error
    except ValueError as error:  # UnicodeDecodeError included
        raise IngestError(f"body: not valid JSON ({error})") from error
    if isinstance(body, dict):
        return [_event(body, "event")]
    if not isinstance(body, list):
        raise IngestError("body: must be an event object or an array of them")
    if not body:
        raise IngestError("events: must not be empty")
    if len(body) > MAX_BATCH:
        raise IngestError(f"events: at most {MAX_BATCH} events per request")
    return [_event(item, f"events[{index}]") for index, item in enumerate(body)]


def _event(item: Any, where: str) -> IncomingEvent:
    if not isinstance(item, dict):
        raise IngestError(f"{where}: must be an object")
    source_id = _optional_id(item, "event_id", where)
    identity = item.get("identity")
    if not isinstance(identity, str) or not identity.strip():
        raise IngestError(f"{where}.identity: must be a non-empty string")
    if len(identity) > MAX_IDENTITY_CHARS:
        raise IngestError(f"{where}.identity: at most {MAX_IDENTITY_CHARS} characters")
    event_type = item.get("event_type")
    if not isinstance(event_type, str) or event_type not in EVENT_TYPES:
        raise IngestError(f"{where}.event_type: must be one of the documented memory.* event types")
    timestamp = item.get("timestamp_ms")
    # bool is an int subclass in Python; JSON true is not a timestamp.
    if not isinstance(timestamp, int) or isinstance(timestamp, bool):
        raise IngestError(f"{where}.timestamp_ms: must be an integer")
    if not 0 <= timestamp < _U63:
        raise IngestError(f"{where}.timestamp_ms: must be between 0 and 2^63-1")
    data = item.get("data")
    if not isinstance(data, dict):
        raise IngestError(f"{where}.data: must be an object")
    if len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")) > MAX_DATA_BYTES:
        raise IngestError(f"{where}.data: at most {MAX_DATA_BYTES} bytes of JSON")
    if event_type == "memory.quarantine.verdict":
        # docs/timeline.md §3.4: view-only readers receive verdicts, so they carry no reviewer and no rationale
        # (which may quote the quarantined text), whatever the pushing runtime put there.
        data = {key: value for key, value in data.items() if key != "reviewer"}
        if "rationale" in data:
            data["rationale"] = None
    return IncomingEvent(
        source_event_id=source_id,
        identity=identity,
        event_type=event_type,
        timestamp_ms=timestamp,
        data=data,
        interaction_id=_optional_id(item, "interaction_id", where),
    )


def _optional_id(item: dict[str, Any], name: str, where: str) -> str | None:
    value = item.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise IngestError(f"{where}.{name}: must be a non-empty string when present")
    if len(value) > MAX_ID_CHARS:
        raise IngestError(f"{where}.{name}: at most {MAX_ID_CHARS} characters")
    return value
