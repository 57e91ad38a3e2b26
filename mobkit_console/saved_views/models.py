"""A saved view: a named link to a filtered console page, kept per user (docs/saved-views.md).

It holds the page's URL name and its query string, never what the page showed: opening it
follows the link, so the page is evaluated afresh under whoever opens it (docs/saved-views.md §2).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

# The pages a view may name: their URL names, with the words the list shows for them.
PAGES = {
    "memory-records": "Records",
    "console-timeline": "Timeline",
    "memory-quarantine": "Quarantine",
    "console-audit": "Audit",
}
NAME_MAX = 80
QUERY_MAX = 2000


class SavedView(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views")
    name = models.CharField(max_length=NAME_MAX)
    page = models.CharField(max_length=40, choices=sorted(PAGES.items()))
    query = models.CharField(max_length=QUERY_MAX, blank=True)
    # Users this view is shared with: they may open it (and see it listed), never change it.
    shared_with = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="views_shared_with_me", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name", "id")
        constraints = [models.UniqueConstraint(fields=("owner", "name"), name="saved_view_name_per_owner")]

    def __str__(self) -> str:
        return f"{self.name} ({PAGES.get(self.page, self.page)})"
