"""How current each replica realm's copy is: shown on Holdings and answered to monitors (docs/replicas.md §5).

Read from what the follower leaves on disk, never from a connection to the copy: the copy's
``-txid`` file (the last transaction Litestream applied, and when) and ``followers.json``, which
``follow_replicas`` rewrites every second (its followers, their state, the newest transaction each
source holds).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from memory_panel import conf
from memory_panel.replicas import followers_status
from memory_panel.store.realms import realm_names, replica_parts, replica_txid

# follow_replicas rewrites its status every second; this much silence means it stopped.
STATUS_SILENT_S = 15.0
# Beyond three listing intervals, how long a source's listing may run (timeouts, retries) before it is stuck.
LISTING_STUCK_S = 30.0
# A copy may trail its source by a transaction or two while the follower polls; behind for this
# long, it is not following.
BEHIND_S = 30.0


@dataclass(frozen=True)
class ReplicaLag:
    realm: str  # <label>/<realm>
    label: str
    txid: int | None  # the last transaction applied to the copy
    source_txid: int | None  # the newest the source held at the supervisor's last look
    current_at_ms: int | None  # the last moment the copy was known to be up to date
    follower: str  # following · restoring · restarting · not running
    problem: str | None  # why the copy is flagged as stale; None when it is following

    @property
    def stale(self) -> bool:
        return self.problem is not None

    @property
    def age_s(self) -> float | None:
        return None if self.current_at_ms is None else max(0.0, time.time() - self.current_at_ms / 1000)

    def as_json(self) -> dict:
        return {
            "realm": self.realm, "label": self.label, "txid": self.txid, "source_txid": self.source_txid,
            "current_at_ms": self.current_at_ms,
            "age_ms": None if self.age_s is None else int(self.age_s * 1000),
            "follower": self.follower, "stale": self.stale, "problem": self.problem,
        }


@dataclass(frozen=True)
class SourceProblem:
    label: str
    problem: str  # why its realms may be missing or stale, the URL's password hidden


def source_problems() -> list[SourceProblem]:
    """Each configured source ``follow_replicas`` cannot list, or is not there to list: without
    this, a source with wrong credentials would show no realms and nothing wrong (docs/replicas.md §5)."""
    sources = conf.replica_sources()
    if not sources:
        return []
    status = followers_status(conf.replica_copies_root())
    now_ms = time.time_ns() // 1_000_000
    problems = []
    for label in sources:
        silence = _silence(status, now_ms)
        if silence is not None:
            problems.append(SourceProblem(label, silence))
        elif label not in status.get("sources", {}):
            problems.append(SourceProblem(label, "follow_replicas was started without this source: restart it"))
        elif problem := _listing_problem(status["sources"][label], now_ms):
            problems.append(SourceProblem(label, problem))
    return problems


def _listing_problem(source: dict, now_ms: int) -> str | None:
    if source.get("error"):
        return f"cannot be listed: {source['error']}"
    listed_at_ms = source.get("listed_at_ms")
    if listed_at_ms is None:
        return "not listed yet: its realms appear once follow_replicas has listed it"
    # A listing may take a while (timeouts, retries); this long past several turns, it is stuck.
    if now_ms - listed_at_ms > (3 * source.get("list_every_s", 10) + LISTING_STUCK_S) * 1000:
        return f"last listed {(now_ms - listed_at_ms) / 1000:.0f} s ago"
    return None


def _silence(status: dict | None, now_ms: int) -> str | None:
    if status is None:
        return "follow_replicas has never run on this console host"
    if now_ms - status["written_at_ms"] > STATUS_SILENT_S * 1000:
        return f"follow_replicas stopped reporting {(now_ms - status['written_at_ms']) / 1000:.0f} s ago"
    return None


@dataclass(frozen=True)
class ReplicaHealth:
    """Every replica realm's lag and every source's problem: what ``GET /console/replicas/health``
    answers and the readiness probe's ``replicas`` check reads (docs/serving.md §6)."""

    lags: list[ReplicaLag]
    sources: list[SourceProblem]

    @property
    def stale(self) -> list[str]:
        return [lag.realm for lag in self.lags if lag.stale]

    @property
    def ok(self) -> bool:
        return not self.stale and not self.sources

    @property
    def problems(self) -> list[str]:
        """One sentence per flagged copy and per source in trouble."""
        return ([f"{lag.realm}: {lag.problem}" for lag in self.lags if lag.stale]
                + [f"source {source.label}: {source.problem}" for source in self.sources])


def replica_health() -> ReplicaHealth:
    return ReplicaHealth(replica_lag(), source_problems())


def replica_lag(*, realms: list[str] | None = None) -> list[ReplicaLag]:
    """One entry per replica realm among ``realms``, in name order. By default every replica realm
    served and every realm ``follow_replicas`` follows that has no copy yet (``uncopied_replicas``)."""
    served = realm_names() if realms is None else realms
    names = [name for name in served if replica_parts(name)]
    if not names and (realms is not None or not conf.replica_sources()):
        return []
    status = followers_status(conf.replica_copies_root())
    now_ms = time.time_ns() // 1_000_000
    lags = [_lag(name, status, now_ms) for name in names]
    if realms is None:
        lags = sorted(lags + _uncopied(status, served, now_ms), key=lambda lag: lag.realm)
    return lags


def uncopied_replicas() -> list[ReplicaLag]:
    """Each realm ``follow_replicas`` follows that has no copy to serve, its follower having never
    reached follow mode (its restore keeps failing, or the first one still runs). No page lists a
    realm without a copy, so without this one that never restores would show nothing wrong
    (docs/replicas.md §5)."""
    if not conf.replica_sources():
        return []
    return _uncopied(followers_status(conf.replica_copies_root()), realm_names(), time.time_ns() // 1_000_000)


def _uncopied(status: dict | None, served: list[str], now_ms: int) -> list[ReplicaLag]:
    served_names = set(served)
    return [_lag(name, status, now_ms, copied=False)
            for name in sorted((status or {}).get("copies", {}))
            if replica_parts(name) and name not in served_names]


def _lag(name: str, status: dict | None, now_ms: int, *, copied: bool = True) -> ReplicaLag:
    label, _ = replica_parts(name)
    applied = replica_txid(name) if copied else None
    txid, applied_ms = (applied[0], int(applied[1] * 1000)) if applied else (None, None)
    copy = (status or {}).get("copies", {}).get(name)
    source_txid = copy.get("source_txid") if copy else None
    current_at_ms = applied_ms
    problem = None
    silence = _silence(status, now_ms)
    if silence is not None:
        follower, problem = "not running", silence
    elif copy is None:
        follower, problem = "not running", "follow_replicas does not follow this realm"
    elif not copied:
        # docs/replicas.md §3: a copy appears only once its follower enters follow mode.
        follower = copy["state"]
        if follower == "restoring":
            problem = "never copied: its follower is restoring the first copy"
        elif follower == "following":  # the copy was removed by hand, or appeared after the status was read
            problem = "no copy on disk although its follower follows"
        else:
            problem = (f"never copied: its follower has not reached follow mode and is restarting "
                       f"({copy.get('last_error') or 'no reason given'}; {copy.get('restarts', 0)} restarts)")
    else:
        follower = copy["state"]
        if follower == "restoring":
            problem = "its follower is restoring a fresh copy (the last copy is served meanwhile)"
        elif follower != "following":
            problem = f"its follower is restarting ({copy.get('last_error') or 'no reason given'})"
        elif txid is not None and source_txid is not None and txid >= source_txid:
            # Equal to the source as the supervisor last listed it (S3 and SFTP: up to
            # --list-interval-s ago), not as of now.
            current_at_ms = max(applied_ms or 0, copy.get("source_listed_at_ms") or status["written_at_ms"])
        elif applied_ms is not None and now_ms - applied_ms > BEHIND_S * 1000:
            problem = f"{(source_txid or 0) - (txid or 0)} transactions behind its source"
    return ReplicaLag(name, label, txid, source_txid, current_at_ms, follower, problem)
