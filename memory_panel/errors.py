"""The memory domain's own errors. Transports translate them, each in one table:
JSON-RPC codes in ``mobkit_console/rpc/errors.py``, HTTP statuses in ``memory_panel/views/render.py``.

Messages are MobKit's (docs/wire-contract.md §1.5), so every surface says the same sentence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_panel.store.console_index.progress import BuildProgress


class PanelError(Exception):
    """A request the memory domain cannot answer; ``message`` is safe to show the caller."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidParams(PanelError):
    """Bad input: a param, filter, cursor or limit that the domain refuses, named in the message."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"Invalid params: {detail}")
        self.detail = detail


class UnknownRealm(InvalidParams):
    """A realm name with no file in the agent-memory directory (asked for, or gone meanwhile)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown realm '{name}'")
        self.name = name


class NotFound(PanelError):
    """A record id no realm holds."""


class HistoryUnavailable(PanelError):
    """A realm whose audit rows do not tell its history: said so, never guessed (docs/history.md §3)."""

    def __init__(self, realm: str, reason: str) -> None:
        super().__init__(f"the history of realm '{realm}' cannot be reconstructed: {reason}")
        self.realm = realm
        self.reason = reason


class AccessDenied(PanelError):
    """The caller's grants do not allow ``action`` (on ``resource``, when there is one)."""

    def __init__(self, action: str, resource: str | None = None) -> None:
        super().__init__(f"access denied: {action}")
        self.action = action
        self.resource = resource


class StoreFailed(PanelError):
    """A realm file could not be read: busy, damaged, vanished or past the query time limit.

    ``realm`` names the realm when the failure is that realm's (then ``reason`` says why, without
    the message's prefix); a failure no single realm owns has ``realm`` None.
    """

    def __init__(self, message: str, *, realm: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.realm = realm
        self.reason = reason if reason is not None else message


class RealmIndexing(StoreFailed):
    """A large realm whose index is being built, asked for what only the index answers in time.

    docs/realm-index.md §7: reading such a realm directly would run past the query time limit, so
    the read is refused at once, saying how far along the build is (``progress``).
    """

    def __init__(self, realm: str, progress: BuildProgress) -> None:
        if progress.index == "search-index":
            reason = f"building its search index ({progress.summary()}); search again in a moment"
        else:
            reason = f"being indexed ({progress.summary()}); its pages answer once the index is ready"
        super().__init__(f"agent memory panel failed: realm '{realm}' is {reason}", realm=realm, reason=reason)
        self.progress = progress


class AuditRefused(PanelError):
    """A quarantined body whose read could not be recorded in the audit log: not shown (fail closed)."""

    def __init__(self) -> None:
        super().__init__("audit log unavailable: a quarantined body is shown only once its read is recorded")


class BackendUnavailable(PanelError):
    """The ledger's state file exists but cannot be read (MobKit's "memory backend unavailable")."""


class ReadOnly(PanelError):
    """A write the runtime would accept; the console never writes."""

    def __init__(self) -> None:
        super().__init__("console is read-only")
