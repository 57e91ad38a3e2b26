"""The operational assertion/conflict ledger, read from MobKit's state file (docs/runtime-surfaces.md §1).

MobKit loads ``memory-ledger-state.json`` once at boot and owns it afterwards; the console only
reads it, and re-reads it whenever the file is replaced (MobKit writes a sibling ``.tmp`` and
renames it over the state file, §1.6), so a fresh inode, mtime or size means a fresh parse.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_panel import conf

from memory_panel.errors import BackendUnavailable, InvalidParams
from memory_panel.visibility import require_ledger

if TYPE_CHECKING:
    from access.caller import Access

# docs/runtime-surfaces.md §1.1: the fixed store order; the names are labels only.
SUPPORTED_STORES = ("knowledge_graph", "vector", "timeline", "todo", "top_of_mind")
DEFAULT_STORE = "knowledge_graph"
# docs/runtime-surfaces.md §1.2: the oldest assertions beyond this are evicted, at index time and at load.
ASSERTIONS_MAX_RETAINED = 4096
STATE_FILE_NAME = "memory-ledger-state.json"
LEGACY_STATE_FILE_NAME = "elephant-memory-state.json"


class LedgerUnreadable(Exception):
    """The state file exists but cannot be loaded; MobKit's boot fails on the same file (§1.6).

    ``display`` is the prefix of the matching ``LocalJsonMemoryStoreError`` variant (§1.7).
    """

    def __init__(self, path: Path, detail: str, *, display: str = "invalid store data") -> None:
        super().__init__(f"{display}: {path.name}: {detail}")
        self.path = path
        self.detail = detail


@dataclass(frozen=True)
class LedgerState:
    path: Path
    exists: bool
    adopted_legacy: bool  # the pre-rename elephant-memory-state.json is the file in use
    assertions: tuple[dict[str, Any], ...]  # insertion order, oldest first
    conflicts: tuple[dict[str, Any], ...]  # (entity, topic, store) order


@dataclass(frozen=True)
class LedgerFilters:
    """Canonical query filters; None means no restriction."""

    entity: str | None = None
    topic: str | None = None
    store: str | None = None
    query: str | None = None


def canonical_token(value: str) -> str:
    """docs/runtime-surfaces.md §1.1: trim, then ASCII-lowercase (non-ASCII letters keep their case)."""
    return value.strip().translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ledger_state_path() -> tuple[Path, bool]:
    """The file MobKit's local_json backend uses, and whether it is the adopted legacy file.

    docs/runtime-surfaces.md §1.6: the legacy elephant file is used as-is (not renamed) only when the new one is absent.
    """
    root = conf.persistent_state()
    current = root / STATE_FILE_NAME
    legacy = root / LEGACY_STATE_FILE_NAME
    if not current.exists() and legacy.exists():
        return legacy, True
    return current, False


_cache_lock = threading.Lock()
_cache: dict[Path, tuple[tuple[int, int, int], LedgerState]] = {}


def ledger_state() -> LedgerState:
    """The ledger as the state file holds it now. Raises LedgerUnreadable for a corrupt file."""
    path, adopted = ledger_state_path()
    try:
        stat = path.stat()
    except FileNotFoundError:
        # docs/runtime-surfaces.md §1.6: a missing file loads as empty state.
        return LedgerState(path, False, adopted, (), ())
    key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    with _cache_lock:
        cached = _cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return LedgerState(path, False, adopted, (), ())
    except OSError as error:
        raise LedgerUnreadable(path, error.strerror or str(error), display="I/O error") from error
    assertions, conflicts = _parse_state(path, raw)
    state = LedgerState(path, True, adopted, assertions, conflicts)
    with _cache_lock:
        _cache[path] = (key, state)
    return state


def _parse_state(path: Path, raw: bytes) -> tuple[tuple[dict, ...], tuple[dict, ...]]:
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise LedgerUnreadable(path, f"not valid JSON ({error})") from error
    if not isinstance(document, dict):
        raise LedgerUnreadable(path, "the top level must be a JSON object")
    raw_assertions = _list_field(path, document, "assertions")
    raw_conflicts = _list_field(path, document, "conflicts")

    assertions = []
    for index, row in enumerate(raw_assertions):
        assertion = _load_assertion(path, index, row)
        if assertion is not None:
            assertions.append(assertion)
    assertions = assertions[-ASSERTIONS_MAX_RETAINED:]

    # MobKit keys conflicts in a BTreeMap: a repeated key keeps the last row, iteration is sorted.
    conflicts: dict[tuple[str, str, str], dict[str, Any]] = {}
    for index, row in enumerate(raw_conflicts):
        conflict = _load_conflict(path, index, row)
        if conflict is not None:
            conflicts[(conflict["entity"], conflict["topic"], conflict["store"])] = conflict
    return tuple(assertions), tuple(conflicts[key] for key in sorted(conflicts))


def _list_field(path: Path, document: dict[str, Any], name: str) -> list[Any]:
    value = document.get(name)
    if value is None and name not in document:
        return []  # docs/runtime-surfaces.md §1.6: both keys default to [] on load
    if not isinstance(value, list):
        raise LedgerUnreadable(path, f"'{name}' must be an array")
    return value


def _required(path: Path, where: str, row: Any, name: str, kind: str) -> Any:
    """A structurally required field (a serde failure in MobKit, so the whole load fails)."""
    if not isinstance(row, dict):
        raise LedgerUnreadable(path, f"{where} must be a JSON object")
    if name not in row:
        raise LedgerUnreadable(path, f"{where} is missing field '{name}'")
    value = row[name]
    if kind == "string" and not isinstance(value, str):
        raise LedgerUnreadable(path, f"{where} field '{name}' must be a string")
    if kind == "millis" and (
        isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**64
    ):
        raise LedgerUnreadable(path, f"{where} field '{name}' must be an unsigned integer")
    return value


def _optional(path: Path, where: str, row: dict[str, Any], name: str, kind: type) -> Any:
    value = row.get(name)
    if value is not None and not isinstance(value, kind):
        expected = "a JSON object" if kind is dict else "a string"
        raise LedgerUnreadable(path, f"{where} field '{name}' must be {expected} or null")
    return value


def _canonical_row(path: Path, where: str, row: Any) -> tuple[str, str, str] | None:
    """(entity, topic, store) canonicalized, or None when the row fails MobKit's load checks."""
    entity = canonical_token(_required(path, where, row, "entity", "string"))
    topic = canonical_token(_required(path, where, row, "topic", "string"))
    store = canonical_token(_required(path, where, row, "store", "string"))
    if not entity or not topic or store not in SUPPORTED_STORES:
        return None  # docs/runtime-surfaces.md §1.6: rows failing normalization are dropped silently
    return entity, topic, store


def _load_assertion(path: Path, index: int, row: Any) -> dict[str, Any] | None:
    where = f"assertions[{index}]"
    assertion_id = _required(path, where, row, "assertion_id", "string")
    fact = _required(path, where, row, "fact", "string").strip()
    indexed_at_ms = _required(path, where, row, "indexed_at_ms", "millis")
    metadata = _optional(path, where, row, "metadata", dict)
    key = _canonical_row(path, where, row)
    if key is None or not fact:
        return None
    entity, topic, store = key
    return {
        "assertion_id": assertion_id,
        "entity": entity,
        "topic": topic,
        "store": store,
        "fact": fact,
        "metadata": metadata,
        "indexed_at_ms": indexed_at_ms,
    }


def _load_conflict(path: Path, index: int, row: Any) -> dict[str, Any] | None:
    where = f"conflicts[{index}]"
    updated_at_ms = _required(path, where, row, "updated_at_ms", "millis")
    reason = _optional(path, where, row, "reason", str)
    key = _canonical_row(path, where, row)
    if key is None:
        return None
    entity, topic, store = key
    reason = reason.strip() if reason is not None else None
    return {
        "entity": entity,
        "topic": topic,
        "store": store,
        "reason": reason or None,
        "updated_at_ms": updated_at_ms,
    }


def parse_ledger_filters(params: dict[str, Any]) -> LedgerFilters:
    """``mobkit/memory/query`` params, validated in MobKit's order: entity → topic → store → query."""
    entity = _filter_token(params, "entity", "entity filter must be a string")
    topic = _filter_token(params, "topic", "topic filter must be a string")
    store = None
    if params.get("store") is not None:
        # docs/runtime-surfaces.md §1.3: the store is validated exactly as in mobkit/memory/index (§1.2).
        raw = params["store"]
        store = canonical_token(raw) if isinstance(raw, str) else ""
        if not store:
            raise InvalidParams("store must be a non-empty string when provided")
        if store not in SUPPORTED_STORES:
            raise InvalidParams(
                f"store '{store}' is unsupported (allowed: {', '.join(SUPPORTED_STORES)})"
            )
    # docs/runtime-surfaces.md §1.3, open question 1: MobKit's parse of a non-string `query` is unknown; the console
    # refuses it with the same wording as the other filters rather than ignoring it.
    query = _filter_token(params, "query", "query filter must be a string")
    return LedgerFilters(entity=entity, topic=topic, store=store, query=query)


def _filter_token(params: dict[str, Any], name: str, message: str) -> str | None:
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidParams(message)
    return canonical_token(value) or None  # docs/runtime-surfaces.md §1.3: an empty filter means no filter


def ledger_read(*, access: Access) -> LedgerState:
    """The ledger for a caller with an unscoped ``agent.memory.read``; every ledger surface asks here."""
    require_ledger(access)
    try:
        return ledger_state()
    except LedgerUnreadable as error:
        # MobKit fails boot on a corrupt state file (§1.6), so it never answers a query over one;
        # the console reports MobKit's backend-unavailable error (its code: mobkit_console/rpc/errors.py).
        raise BackendUnavailable(f"Memory backend unavailable: {error}") from error


def ledger_query(*, access: Access, filters: LedgerFilters) -> dict[str, list[dict[str, Any]]]:
    """``mobkit/memory/query``'s result (docs/runtime-surfaces.md §1.3)."""
    return _filtered(ledger_read(access=access), filters)


def ledger_stores(*, access: Access) -> list[dict[str, Any]]:
    """``mobkit/memory/stores``'s ``stores`` list (docs/runtime-surfaces.md §1.4)."""
    return _store_counts(ledger_read(access=access))


@dataclass(frozen=True)
class LedgerOverview:
    state: LedgerState
    stores: list[dict[str, Any]]
    assertions: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    blocked: frozenset[tuple[str, str]]  # (entity, topic) under an active conflict, any store

    @property
    def assertion_rows(self) -> list[tuple[dict[str, Any], bool]]:
        """Each shown assertion with whether an active conflict blocks its (entity, topic)."""
        return [(row, (row["entity"], row["topic"]) in self.blocked) for row in self.assertions]


def ledger_overview(*, access: Access, filters: LedgerFilters) -> LedgerOverview:
    """The ledger page: one read of the file, the same filters and counts as the RPC methods."""
    state = ledger_read(access=access)
    shown = _filtered(state, filters)
    return LedgerOverview(
        state=state,
        stores=_store_counts(state),
        assertions=shown["assertions"],
        conflicts=shown["conflicts"],
        # docs/runtime-surfaces.md §1.2 conflict_active: a conflict blocks its (entity, topic) in every store, so the
        # whole ledger counts here, not only the conflicts the filters leave on the page.
        blocked=frozenset((row["entity"], row["topic"]) for row in state.conflicts),
    )


def _filtered(state: LedgerState, filters: LedgerFilters) -> dict[str, list[dict[str, Any]]]:
    """Exact filters first, then the substring ``query`` (docs/runtime-surfaces.md §1.3); file order is kept."""
    return {
        "assertions": [row for row in state.assertions if _matches(row, filters, row["fact"])],
        "conflicts": [row for row in state.conflicts if _matches(row, filters, row["reason"] or "")],
    }


def _matches(row: dict[str, Any], filters: LedgerFilters, text: str) -> bool:
    for name in ("entity", "topic", "store"):
        wanted = getattr(filters, name)
        if wanted is not None and row[name] != wanted:
            return False
    if filters.query is None:
        return True
    # The fact and reason are lowercased in full (Rust to_lowercase); entity and topic are canonical.
    return any(filters.query in field for field in (row["entity"], row["topic"], text.lower()))


def _store_counts(state: LedgerState) -> list[dict[str, Any]]:
    """Every store in the fixed order; record_count = its assertions + its conflict signals (§1.4)."""
    counts = dict.fromkeys(SUPPORTED_STORES, 0)
    for row in (*state.assertions, *state.conflicts):
        counts[row["store"]] += 1
    return [{"store": store, "record_count": counts[store]} for store in SUPPORTED_STORES]


# docs/runtime-surfaces.md §1.7: MobKit's health check, byte for byte: a raw HTTP/1.1 GET with 2 s timeouts.
HEALTHCHECK_TIMEOUT_SECONDS = 2.0


@dataclass(frozen=True)
class LedgerHealth:
    url: str | None
    healthy: bool
    message: str  # "HTTP 200" when healthy; MobKit's failure text otherwise


class _HealthFailure(Exception):
    pass


def ledger_health(*, endpoint: str) -> LedgerHealth:
    """Check ``<endpoint>/v1/health`` the way MobKit's ledger does before every persist."""
    url = endpoint.strip().rstrip("/") + "/v1/health"
    try:
        host, port, path = _parse_health_url(endpoint, url)
        status = _health_status(url, host, port, path)
    except _HealthFailure as failure:
        return LedgerHealth(url, False, str(failure))
    return LedgerHealth(url, True, f"HTTP {status}")


def _parse_health_url(endpoint: str, url: str) -> tuple[str, int, str]:
    if not endpoint.strip():
        raise _HealthFailure("memory backend health_check_endpoint must not be empty when provided")
    if not url.startswith("http://"):
        raise _HealthFailure(f"memory backend endpoint must start with http:// (got '{url}')")
    authority, slash, rest = url[len("http://") :].partition("/")
    host, colon, port_text = authority.partition(":")
    if not host:
        raise _HealthFailure("memory backend endpoint host must not be empty")
    port = 80
    if colon:
        if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
            raise _HealthFailure(f"memory backend endpoint port is invalid in '{url}'")
        port = int(port_text)
    return host, port, slash + rest if slash else "/"


def _health_status(url: str, host: str, port: int, path: str) -> int:
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise _HealthFailure(f"healthcheck resolve failed for '{url}': {error}") from error
    if not addresses:
        raise _HealthFailure(f"healthcheck resolve failed for '{url}': no socket addresses")
    family, kind, proto, _, address = addresses[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.settimeout(HEALTHCHECK_TIMEOUT_SECONDS)
        try:
            sock.connect(address)
        except OSError as error:
            raise _HealthFailure(f"healthcheck connect failed for '{url}': {error}") from error
        request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        try:
            sock.sendall(request.encode("utf-8"))
        except OSError as error:
            raise _HealthFailure(f"healthcheck write failed for '{url}': {error}") from error
        line = _read_status_line(url, sock)
    finally:
        sock.close()
    parts = line.split()
    if len(parts) < 2 or not parts[1].isascii() or not parts[1].isdigit():
        raise _HealthFailure(f"healthcheck parse failed for '{url}': invalid status line '{line}'")
    status = int(parts[1])
    if not 200 <= status < 300:
        raise _HealthFailure(f"healthcheck status failed for '{url}': HTTP {status}")
    return status


def _read_status_line(url: str, sock: socket.socket) -> str:
    received = b""
    try:
        while b"\n" not in received and len(received) < 8192:
            chunk = sock.recv(1024)
            if not chunk:
                break
            received += chunk
    except OSError as error:
        raise _HealthFailure(f"healthcheck read failed for '{url}': {error}") from error
    if not received:
        raise _HealthFailure(f"healthcheck read failed for '{url}': empty response")
    return received.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
