"""Background runs: one thread per realm at a time in a process (docs/realm-index.md §5)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from memory_panel import conf

logger = logging.getLogger("memory_panel.store.console_index")

class BackgroundRuns:
    """Runs ``run(realm)`` in a background thread, one per realm at a time in this process.

    With ``again_if_asked``, a start while the realm's run is under way runs it once more after,
    so what prompted the start is not left to the run that began before it.
    """

    def __init__(self, label: str, run: Callable[[str], object], *, again_if_asked: bool = False) -> None:
        self.label = label
        self.run = run
        self.again_if_asked = again_if_asked
        self.running: set[str] = set()
        self.asked_again: set[str] = set()
        self.lock = threading.Lock()

    def start(self, realm: str) -> None:
        if not conf.realm_index_background():
            self.run(realm)
            return
        with self.lock:
            if realm in self.running:
                if self.again_if_asked:
                    self.asked_again.add(realm)
                return
            self.running.add(realm)
        threading.Thread(target=self._run, args=(realm,), name=f"{self.label}:{realm}", daemon=True).start()

    def is_running(self, realm: str) -> bool:
        with self.lock:
            return realm in self.running

    def _run(self, realm: str) -> None:
        while True:
            try:
                self.run(realm)
            except Exception:
                logger.exception("%s of realm %r failed; pages read the realm directly meanwhile", self.label, realm)
            with self.lock:
                if realm not in self.asked_again:
                    self.running.discard(realm)
                    return
                self.asked_again.discard(realm)
