"""The panel's settings, read in this one module and nowhere else in the app.

Each is read when asked, so ``override_settings`` and a host project's own settings both apply;
a host that sets none gets the defaults the console's README documents.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings


def persistent_state() -> Path:
    """MobKit's ``persistent_state`` directory; the console keeps its realm index under it."""
    return Path(getattr(settings, "MOBKIT_PERSISTENT_STATE", ".mobkit/state"))


def agent_memory_root() -> Path:
    """Where realm files live: ``<agent-memory>/<encoded realm>.sqlite3`` (docs/store-format.md §1.1)."""
    return _agent_memory_root(getattr(settings, "MOBKIT_AGENT_MEMORY_ROOT", None),
                              getattr(settings, "MOBKIT_PERSISTENT_STATE", ".mobkit/state"))


@lru_cache(maxsize=8)
def _agent_memory_root(configured: str | Path | None, state: str | Path) -> Path:
    # Kept per setting value: an all-realm page asks it of every realm, and building a Path is not free.
    return Path(configured) if configured else Path(state) / "agent-memory"


def realm_query_timeout_ms() -> int:
    return int(getattr(settings, "MOBKIT_REALM_QUERY_TIMEOUT_MS", 2000))


def facets_timeout_ms() -> int:
    """CPU time the Records facets may spend counting what no counter holds (docs/realm-index.md §11)."""
    return int(getattr(settings, "MOBKIT_FACETS_TIMEOUT_MS", 1000))


def realm_connections_max() -> int:
    """Most connections to realm and index files a process keeps open at once (docs/serving.md §5)."""
    return max(1, int(getattr(settings, "MOBKIT_REALM_CONNECTIONS", 64)))


def realm_index_min_rows() -> int:
    return int(getattr(settings, "MOBKIT_REALM_INDEX_MIN_ROWS", 20_000))


def realm_direct_max_rows() -> int:
    """Above this many rows a realm is never read directly for what its index answers (docs/realm-index.md §7)."""
    return int(getattr(settings, "MOBKIT_REALM_DIRECT_MAX_ROWS", 500_000))


def realm_index_reconcile_seconds() -> float:
    """Opt-in full rebuild of a written realm's indexes this often; 0 (the default) never."""
    return float(getattr(settings, "MOBKIT_REALM_INDEX_RECONCILE_SECONDS", 0))


def realm_index_usage_seconds() -> float:
    """How often the realm index looks for usage counters the runtime moved (docs/realm-index.md §4)."""
    return float(getattr(settings, "MOBKIT_REALM_INDEX_USAGE_SECONDS", 30))


def realm_index_background() -> bool:
    """Whether index builds run in a background thread (tests build inline to stay deterministic)."""
    return bool(getattr(settings, "MOBKIT_REALM_INDEX_BACKGROUND", True))


def ledger_health_endpoint() -> str | None:
    return getattr(settings, "MOBKIT_LEDGER_HEALTH_ENDPOINT", None)


def replica_sources() -> dict[str, str]:
    """Label → Litestream replica URL of every other host followed (docs/replicas.md §2)."""
    return dict(getattr(settings, "MOBKIT_REPLICA_SOURCES", {}))


def replica_copies_root() -> Path:
    """Where ``follow_replicas`` keeps the local copies: ``<it>/<label>/<encoded realm>.sqlite3``."""
    return persistent_state() / "console" / "replicas"
