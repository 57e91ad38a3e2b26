"""MobKit's enums and size limits the writer enforces (docs/store-format.md §3 and §8)."""

from __future__ import annotations

LLM_AUTHORS = frozenset({"agent", "steward", "distiller"})
AUTHOR_KINDS = ("operator", "application", "agent", "steward", "distiller")
BATCH_KINDS = ("fresh_write", "review_verdict")
INJECTION_SURFACES = ("build", "turn")
PROPOSAL_STATUSES = ("pending", "held", "accepted", "rejected")
PROMOTION_RESOLUTIONS = ("committed", "denied", "expired")
HARVEST_STATUSES = ("pending", "harvested")
QUARANTINE_DECISIONS = ("release", "tombstone")

# docs/store-format.md §8
TITLE_MAX_BYTES = 200
DESCRIPTION_MAX_BYTES = 400
BODY_MAX_BYTES = 65_536
TAGS_MAX_ENTRIES = 32
TAG_MAX_BYTES = 64
BATCH_MAX_OPS = 1024
TOMBSTONE_RECREATION_WINDOW_MS = 7 * 86_400_000
GATED_PROMOTION_EXPIRY_MS = 7 * 86_400_000
REVIEW_RATIONALE_MAX_BYTES = 400
