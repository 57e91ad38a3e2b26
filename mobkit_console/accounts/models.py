"""API tokens: what programs present instead of a session (docs/wire-contract.md §C.1)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    # The token's first characters, so an operator can tell tokens apart without the secret.
    prefix = models.CharField(max_length=16)
    # A token is 32 random bytes, so a fast hash cannot be brute-forced; the slow password
    # hasher would only add latency to every API call.
    token_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"
