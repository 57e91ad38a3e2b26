"""``demo_activity``: believable ongoing activity in the demo realms, one beat at a time.

Each beat (``beats.py``) opens the realm file afresh, after checking it still carries the demo
marker (``marker.py``), writes its transactions through the store writer and closes the file. A
stop request is honoured only between beats, so a stopped run never leaves half an action behind
(a dream without its run sheet, a gate without its staged batch).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from memory_panel.simulator.demo.beats import BEATS, Beat, Scene
from memory_panel.simulator.demo.marker import is_demo_realm
from memory_panel.simulator.demo.phrases import Phrasebook
from memory_panel.simulator.store_writer import StoreWriter, StoreWriteError, realm_file
from memory_panel.store.realms import REALM_SUFFIX, decode_path_segment


class NotADemoRealm(Exception):
    """A realm with no file, or a file ``seed_demo`` did not write; the activity refuses it."""

    def __init__(self, realm: str, path: Path) -> None:
        problem = "has no demo marker" if path.is_file() else "does not exist"
        super().__init__(f"realm '{realm}' ({path}) {problem}: demo_activity writes only "
                         "realm files seed_demo created")
        self.realm = realm


def demo_realms(root: Path, names: Sequence[str]) -> list[str]:
    """The realms to animate: ``names`` (each must be a demo realm), else every demo realm under root."""
    for name in names:
        if not is_demo_realm(realm_file(name, root)):
            raise NotADemoRealm(name, realm_file(name, root))
    if names:
        return list(names)
    found = sorted(decode_path_segment(p.name[: -len(REALM_SUFFIX)]) for p in root.glob(f"*{REALM_SUFFIX}"))
    return [name for name in found if is_demo_realm(realm_file(name, root))]


def run_beat(root: Path, realm: str, beat: Beat, words: Phrasebook) -> str | None:
    """One beat on one realm, on a file checked to be a demo realm just before it is opened."""
    path = realm_file(realm, root)
    if not is_demo_realm(path):
        raise NotADemoRealm(realm, path)
    with StoreWriter.open(realm, root=root) as writer:
        return beat(writer, Scene.of(writer), words)


def run_activity(*, root: Path, realms: Sequence[str], interval: float, rounds: int | None,
                 stop: threading.Event, report: Callable[[str], None], seed: int | None = None) -> int:
    """Run every beat on every realm, round after round, ``interval`` seconds apart.

    ``rounds`` None runs until ``stop`` is set; returns the number of beats that wrote something.
    """
    words = Phrasebook(seed)
    done = 0
    completed_rounds = 0
    while rounds is None or completed_rounds < rounds:
        for realm in realms:
            for beat in BEATS:
                if stop.is_set():
                    return done
                try:
                    line = run_beat(root, realm, beat, words)
                except StoreWriteError as exc:  # the realm refused this beat; nothing of its batch was written
                    report(f"{realm}: {beat.__name__} skipped: {exc}")
                    line = None
                if line is not None:
                    done += 1
                    report(f"{realm}: {line}")
                if interval and stop.wait(interval):
                    return done
        completed_rounds += 1
    return done
