"""The access audit log: one row per audited action, append-only (docs/audit-and-oidc.md §1)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NoReturn

from django.db import models

# docs/audit-and-oidc.md §1: the actions an entry may name.
ACTIONS = (
    "quarantine.body.read",
    "access.denied",
    "records.export",
    "records.search",
    "sign_in",
    "token.create",
    "access.reload",
    "alerts.reload",
    "alerts.test",
)


class AppendOnly(Exception):
    """An attempt to change or delete an audit entry outside retention pruning."""


class AuditEntryQuerySet(models.QuerySet):
    def update(self, **kwargs: Any) -> NoReturn:
        raise AppendOnly("audit entries are never changed")

    def delete(self) -> NoReturn:
        raise AppendOnly("audit entries leave only through retention pruning")

    def prune(self, *, before: datetime) -> int:
        """Delete the entries older than ``before`` (retention); the one way an entry leaves."""
        deleted, _ = models.QuerySet.delete(self.filter(at__lt=before))
        return deleted


class AuditEntry(models.Model):
    at = models.DateTimeField(db_index=True)
    # Who: the access.toml subject ("" for the console itself, e.g. a reload), how they signed in
    # (session, token, jwt; "" when not signed in) and the client address the request came from.
    subject = models.CharField(max_length=254, blank=True, db_index=True)
    sign_in = models.CharField(max_length=16, blank=True)
    client = models.CharField(max_length=64, blank=True)
    action = models.CharField(max_length=32, db_index=True)
    realm = models.CharField(max_length=255, blank=True)
    # A record id, an identity, a token prefix: never record text.
    target = models.CharField(max_length=255, blank=True)
    outcome = models.CharField(max_length=16)  # ok | denied | failed | partial (docs/audit-and-oidc.md §1)
    detail = models.JSONField(default=dict)

    objects = AuditEntryQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["realm", "id"])]

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnly("audit entries are never changed")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise AppendOnly("audit entries leave only through retention pruning")
