"""The demo realms: ``seed_demo`` writes them (``seed.py``, the story in chapters in ``story.py``)."""

from memory_panel.simulator.demo.cast import DEFAULT_REALM, SECOND_REALM
from memory_panel.simulator.demo.seed import DemoSummary, seed_demo

__all__ = ["DEFAULT_REALM", "SECOND_REALM", "DemoSummary", "seed_demo"]
