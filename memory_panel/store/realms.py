"""Realm discovery and read-only connections: the one module that opens a realm file.

Realm files belong to the MobKit runtime. Every connection made here is a SQLite ``mode=ro`` URI
with ``PRAGMA query_only``, so no code path in the console can create, migrate, lock for write or
delete anything in them (docs/store-format.md §1).

A realm is either local (a file under the agent-memory directory, its bare name) or a replica
realm ``<label>/<realm>``: the copy ``manage.py follow_replicas`` keeps of another host's realm
under ``<state>/console/replicas/<label>/`` (docs/replicas.md §1). Litestream applies each
transaction to a copy only once no reader holds it open, so connections to copies are never
pinned, and their changes are seen through the follower's ``-txid`` file (docs/replicas.md §4).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from memory_panel import conf
from django.db import connections
from django.db.backends.signals import connection_created
from django.dispatch import receiver

from memory_panel.errors import InvalidParams, StoreFailed, UnknownRealm
from memory_panel.store.request_memo import once_per_request
from memory_panel.store.signals import realm_query_interrupted
from memory_panel.store.open_connections import connection_closed, connection_used, realm_connection_opened

logger = logging.getLogger("memory_panel.store.realms")

REALM_SUFFIX = ".sqlite3"
# The longest file name the file systems MobKit runs on allow (NAME_MAX on Linux and macOS).
FILE_NAME_MAX = 255
REALM_ALIAS_PREFIX = "realm:"
# Between a replica's label and the realm's own name: ``east/team:blue``.
REPLICA_SEPARATOR = "/"
# Written beside a copy by Litestream's follow mode after each applied transaction: its TXID.
TXID_SUFFIX = "-txid"
# The runtime may hold a write transaction; a read waits this long before reporting the realm busy.
BUSY_TIMEOUT_SECONDS = 5.0
# Page cache of a realm connection (SQLite's default is 2 MiB): a page read needs a few hundred
# KiB of a realm, the OS keeps the file's pages anyway, and a process may have many realms open.
READ_CACHE_KIB = 512

CURRENT_TABLES = (
    "records",
    "proposals",
    "audit",
    "stage",
    "injections",
    "pending_harvests",
    "pending_promotions",
    "dream_runs",
    "dream_audit_verdicts",
    "meerkat_schema",
)
OLDER_TABLES = CURRENT_TABLES[:7]

_SAFE_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_HEX = "0123456789abcdefABCDEF"


def encode_path_segment(value: str) -> str:
    """MobKit's file-name encoding: keep ASCII alphanumerics, '-' and '_'; %XX (upper hex) the rest."""
    out = [chr(b) if b in _SAFE_BYTES else f"%{b:02X}" for b in value.encode("utf-8")]
    return "".join(out) or "_"


def decode_path_segment(segment: str) -> str:
    """Inverse of encode_path_segment; malformed escapes pass through verbatim, bytes decode lossily."""
    if "%" not in segment:
        return segment
    raw = segment.encode("utf-8")
    out = bytearray()
    i = 0
    while i < len(raw):
        if raw[i : i + 1] == b"%" and _is_hex_pair(raw[i + 1 : i + 3]):
            out.append(int(raw[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8", errors="replace")


def _is_hex_pair(pair: bytes) -> bool:
    return len(pair) == 2 and all(chr(c) in _HEX for c in pair)


def agent_memory_root() -> Path:
    return conf.agent_memory_root()


def replica_parts(name: str) -> tuple[str, str] | None:
    """``(label, realm)`` when ``name`` is a replica realm of a configured source, else None."""
    label, sep, realm = name.partition(REPLICA_SEPARATOR)
    if sep and realm and label in conf.replica_sources():
        return label, realm
    return None


def is_replica(name: str) -> bool:
    return replica_parts(name) is not None


def replica_name(label: str, realm: str) -> str:
    return f"{label}{REPLICA_SEPARATOR}{realm}"


@lru_cache(maxsize=16_384)
def realm_file_name(name: str) -> str:
    """``<encoded realm>.sqlite3``; a name no file could carry is bad input, not an OS error.

    Kept per name: every all-realm page asks it of every realm, and encoding is byte by byte.
    """
    file_name = f"{encode_path_segment(name)}{REALM_SUFFIX}"
    if len(file_name) > FILE_NAME_MAX:  # encoded names are ASCII: characters are bytes
        raise InvalidParams(
            f"realm is too long: its file name would be {len(file_name)} bytes, the file system allows {FILE_NAME_MAX}"
        )
    return file_name


def realm_path(name: str) -> Path:
    """Where realm ``name`` lives: the runtime's file, or for a replica realm the follower's copy.

    Once per request: an all-realm page asks it several times of each of 500 realms.
    """
    return once_per_request(("realm_path", name), lambda: _realm_path(name))


def _realm_path(name: str) -> Path:
    parts = replica_parts(name)
    if parts is not None:
        label, realm = parts
        return conf.replica_copies_root() / label / realm_file_name(realm)
    return _local_realm_path(agent_memory_root(), name)


@lru_cache(maxsize=16_384)
def _local_realm_path(root: Path, name: str) -> Path:
    return root / realm_file_name(name)


def _stems(directory: Path) -> list[str]:
    # scandir: the directory listing already says which entries are files, no stat per realm.
    try:
        with os.scandir(directory) as entries:
            return [
                decode_path_segment(entry.name[: -len(REALM_SUFFIX)])
                for entry in entries
                if entry.name.endswith(REALM_SUFFIX) and entry.is_file()
            ]
    except (FileNotFoundError, NotADirectoryError):
        return []


_shadowed_logged: set[str] = set()


def realm_names() -> list[str]:
    """Every realm with a store file, sorted; read from the directories so files come and go, once
    per request (a page's sections all see the same realms, and 500 are listed once, not per section).

    Local realms keep their bare names; each followed copy is ``<label>/<realm>``. A local realm
    whose name would read as a replica realm (``east/x`` while ``east`` is a label) is not served:
    the name means the replica's realm on every surface (docs/replicas.md §1).
    """
    return list(once_per_request(("realm_names",), _listed_realm_names))


def realm_names_containing(text: str, limit: int, *, after: str | None = None) -> tuple[list[str], int]:
    """Up to ``limit`` realm names holding ``text`` (any case; every realm for empty text), in name
    order after ``after`` when given; and how many names hold it in all."""
    needle = text.strip().casefold()
    matching = [name for name in realm_names() if needle in name.casefold()]
    start = 0 if after is None else bisect_right(matching, after)
    return matching[start:start + limit], len(matching)


def _listed_realm_names() -> list[str]:
    sources = conf.replica_sources()
    names: set[str] = set()
    for name in _stems(agent_memory_root()):
        if is_replica(name):
            if name not in _shadowed_logged:
                _shadowed_logged.add(name)
                logger.warning("local realm %r is not served: %r names a replica source", name,
                               name.partition(REPLICA_SEPARATOR)[0])
            continue
        names.add(name)
    for label in sources:
        names.update(replica_name(label, realm) for realm in _stems(conf.replica_copies_root() / label))
    return sorted(names)


def realm_exists(name: str) -> bool:
    return once_per_request(("realm_exists", name), lambda: _realm_file_exists(name))


def _realm_file_exists(name: str) -> bool:
    try:
        return realm_path(name).is_file()
    except OSError:  # a name longer than the file system allows names no realm
        return False


def copy_change_stamp(path: Path) -> tuple[int, int] | None:
    """For a replica copy, what moves when its follower applies a transaction (its ``-txid`` file's
    mtime and size); None for a local realm file."""
    # The timeline watcher asks this of every realm several times a second: kept to a look at the
    # settings when no replica is followed, and a comparison of strings when some are.
    if not conf.replica_sources():
        return None
    if not os.path.abspath(path).startswith(os.path.join(os.path.abspath(conf.replica_copies_root()), "")):
        return None
    try:
        stat = path.with_name(path.name + TXID_SUFFIX).stat()
    except OSError:
        return (0, 0)
    return stat.st_mtime_ns, stat.st_size


def replica_txid(name: str) -> tuple[int, float] | None:
    """A replica realm's copy: the last transaction Litestream applied and when (Unix seconds).

    None for a local realm, or a copy whose follower has not written its ``-txid`` file yet. Read
    from the file alone, so watching a copy never holds a connection that would stall its follower.
    """
    if not is_replica(name):
        return None
    path = realm_path(name)
    txid_file = path.with_name(path.name + TXID_SUFFIX)
    try:
        stat = txid_file.stat()
        return int(txid_file.read_text().strip() or "0", 16), stat.st_mtime
    except (OSError, ValueError):
        return None


def readonly_uri(path: Path) -> str:
    return f"file:{quote(str(path.absolute()))}?mode=ro"


class ReplacedText(str):
    """A TEXT value that was not valid UTF-8, each bad byte shown as U+FFFD, so its row is flagged."""


def lenient_text(raw: bytes) -> str:
    """SQLite's TEXT → str without failing the whole statement on one hand-edited value.

    sqlite3's default decoder raises for invalid UTF-8, which fails every row the statement
    returns (a whole listing, for everyone); this one decodes lossily and marks the value.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return ReplacedText(raw.decode("utf-8", errors="replace"))


def connect_readonly(path: Path) -> sqlite3.Connection:
    """A raw read-only connection, closed by its user once its read is done (a copy's follower
    waits while one is open, docs/replicas.md §4)."""
    conn = sqlite3.connect(
        readonly_uri(path), uri=True, timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False
    )
    conn.text_factory = lenient_text
    conn.execute("PRAGMA query_only=1")
    return conn


_alias_lock = threading.Lock()


def realm_alias(name: str) -> str:
    """The Django database alias reading realm ``name``, registered on first use.

    Raises UnknownRealm when the realm has no file: an alias must never make SQLite create one.
    """
    if not realm_exists(name):
        raise UnknownRealm(name)
    alias = f"{REALM_ALIAS_PREFIX}{name}"
    if alias not in connections.settings:
        with _alias_lock:
            if alias not in connections.settings:
                connections.settings[alias] = _realm_database_settings(realm_path(name))
    connection_used(alias)  # docs/serving.md §5: the least recently used realm is closed first
    return alias


def _realm_database_settings(path: Path) -> dict:
    default = connections.settings["default"]
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": readonly_uri(path),
        "OPTIONS": {
            "timeout": BUSY_TIMEOUT_SECONDS,
            "init_command": f"PRAGMA query_only=1; PRAGMA cache_size=-{READ_CACHE_KIB}",
        },
        # A fresh connection per request: a replaced or restored realm file is seen at once.
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": False,
        "AUTOCOMMIT": True,
        "ATOMIC_REQUESTS": False,
        "TIME_ZONE": None,
        "USER": "",
        "PASSWORD": "",
        "HOST": "",
        "PORT": "",
        "TEST": {**default.get("TEST", {}), "NAME": None, "MIRROR": None, "MIGRATE": False},
    }


class _QueryDeadline:
    """Interrupts a realm query once it has done more than the time limit's worth of work.

    An execute wrapper starts the clock; SQLite's progress handler, called every so many VM steps,
    aborts the statement once the deadline has passed (it raises "interrupted"). The clock is the
    thread's CPU time, not the wall clock: a request that waited for a worker thread or for the
    GIL while others ran has done no work meanwhile, and must not fail for it (docs/serving.md
    §3). SQLite runs outside the GIL, and its work is this thread's CPU time all the same.
    """

    # A handler call needs the GIL, which a busy process hands over only every few milliseconds:
    # calling it rarely (about every millisecond of SQLite work) keeps queries from queueing for it.
    STEPS = 100_000

    def __init__(self, limit_seconds: float, realm: str) -> None:
        self.limit_seconds = limit_seconds
        self.realm = realm
        self.deadline: float | None = None

    def __call__(self, execute, sql, params, many, context):
        self.deadline = time.thread_time() + self.limit_seconds
        return execute(sql, params, many, context)

    def progress(self) -> int:
        if self.deadline is None or time.thread_time() <= self.deadline:
            return 0
        # SQLite interrupts the statement on this answer and asks no more of it: one signal a query.
        realm_query_interrupted.send_robust(sender=None, realm=self.realm)
        return 1


@receiver(connection_created)
def _limit_realm_queries(sender, connection, **kwargs) -> None:
    if not connection.alias.startswith(REALM_ALIAS_PREFIX):
        return
    connection.connection.text_factory = lenient_text
    deadline = _QueryDeadline(conf.realm_query_timeout_ms() / 1000, connection.alias.removeprefix(REALM_ALIAS_PREFIX))
    connection.connection.set_progress_handler(deadline.progress, _QueryDeadline.STEPS)
    # The wrapper object outlives its connection (CONN_MAX_AGE 0 reconnects every request), so the
    # previous connection's deadline goes: appending alone nests one more wrapper per request.
    connection.execute_wrappers[:] = [w for w in connection.execute_wrappers if not isinstance(w, _QueryDeadline)]
    connection.execute_wrappers.append(deadline)
    realm_connection_opened(connection.alias, connection.close)  # docs/serving.md §5


# docs/wire-contract.md §1.5: every store failure reads "agent memory panel failed: <reason>".
_FAILED = "agent memory panel failed: "


def store_failed(error: BaseException, *, realm: str | None = None) -> StoreFailed:
    """What a caller is told when a realm read fails (never a traceback, never a 500).

    With ``realm``, the failure is that realm file's: the message names it and ``reason`` says why.
    A query past the time limit is the request's failure, not the file's, so it names no realm.
    """
    if isinstance(error, StoreFailed):
        return error
    if "interrupted" in str(error):
        return StoreFailed(f"{_FAILED}the realm query ran past the {conf.realm_query_timeout_ms()} ms time limit")
    reason = str(error) or type(error).__name__
    if realm is None:
        return StoreFailed(f"{_FAILED}{reason}")
    return realm_unreadable(realm, reason)


def realm_unreadable(realm: str, reason: str) -> StoreFailed:
    return StoreFailed(f"{_FAILED}realm '{realm}' could not be read: {reason}", realm=realm, reason=reason)


def close_realm_connections() -> None:
    """Close this thread's realm connections (connections are per thread), keeping the aliases."""
    with _alias_lock:
        for alias in [a for a in connections.settings if a.startswith(REALM_ALIAS_PREFIX)]:
            if hasattr(connections._connections, alias):
                getattr(connections._connections, alias).close()
                delattr(connections._connections, alias)
            connection_closed(alias)


def forget_realm_connections() -> None:
    """Close this thread's realm connections and unregister every realm alias (tests use it between
    cases; nothing else needs to)."""
    close_realm_connections()
    with _alias_lock:
        for alias in [a for a in connections.settings if a.startswith(REALM_ALIAS_PREFIX)]:
            del connections.settings[alias]


@dataclass(frozen=True)
class StoreFormat:
    """What one realm file holds: which tables, and whether records carry ever_quarantined."""

    tables: frozenset[str]
    has_ever_quarantined: bool
    schema_version: int | None  # the meerkat_schema ledger row for 'mobkit-memory', if any

    @property
    def label(self) -> str:
        if "meerkat_schema" in self.tables:
            return f"current (ledger v{self.schema_version})" if self.schema_version else "current"
        return "older (7 tables)"

    def has(self, table: str) -> bool:
        return table in self.tables


# docs/demo.md §2: the domain of seed_demo's row in a demo file's meerkat_schema ledger (the runtime
# never writes it), so a page can say a finding is the demo's own.
DEMO_LEDGER_DOMAIN = "mobkit-console-demo"

_format_cache: dict[tuple[str, int], StoreFormat] = {}


def store_format(name: str) -> StoreFormat:
    """The realm's format, cached by SQLite's schema cookie so a migrated file is re-read."""
    cursor = connections[realm_alias(name)].cursor()
    try:
        schema_cookie = cursor.execute("PRAGMA schema_version").fetchone()[0]
        key = (name, schema_cookie)
        cached = _format_cache.get(key)
        if cached is not None:
            return cached
        tables = frozenset(
            row[0] for row in cursor.execute("SELECT name FROM sqlite_master WHERE type='table'")
        )
        columns = (
            {row[1] for row in cursor.execute("PRAGMA table_info(records)")}
            if "records" in tables
            else set()
        )
        version = None
        if "meerkat_schema" in tables:
            row = cursor.execute(
                "SELECT version FROM meerkat_schema WHERE domain='mobkit-memory'"
            ).fetchone()
            version = row[0] if row else None
    finally:
        cursor.close()
    if "records" not in tables:
        # A file truncated to nothing opens as an empty database: no realm's tables, not an empty realm.
        raise realm_unreadable(name, "the file holds no MobKit store (no records table)")
    fmt = StoreFormat(tables, "ever_quarantined" in columns, version)
    _format_cache[key] = fmt
    return fmt


class RealmRouter:
    """Realm aliases hold MobKit's tables only, and the console never migrates them."""

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints) -> bool | None:
        if db.startswith(REALM_ALIAS_PREFIX):
            return False
        if app_label == "memory_panel":
            return False
        return None
