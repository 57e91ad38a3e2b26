"""``StoreWriter``: the core plus each runtime-side behaviour, one class for its callers."""

from __future__ import annotations

from memory_panel.simulator.store_writer.direct import DirectWrites
from memory_panel.simulator.store_writer.dreams import DreamWrites
from memory_panel.simulator.store_writer.proposals import ProposalWrites
from memory_panel.simulator.store_writer.review import QuarantineReview
from memory_panel.simulator.store_writer.usage import UsageWrites


class StoreWriter(DirectWrites, UsageWrites, ProposalWrites, DreamWrites, QuarantineReview):
    """Writes one realm file with MobKit's exact write semantics. Not thread-safe; one per file.

    ``StoreCore`` (core.py) opens the file and applies batches; each base adds what one part of
    the runtime writes: direct writes, injections and usage, proposals and gated promotions, the
    steward's dream runs and harvests, quarantine review.
    """
