"""A small realm's search index is built inline by its first search; concurrent first searches
must all be answered (one builds, the others wait for it) rather than told "being built"."""

from __future__ import annotations

import threading

from memory_panel.simulator.demo import seed_demo
from memory_panel.store.search_index import search_index


def test_concurrent_first_searches_of_a_small_realm_all_get_the_index(agent_memory_dir):
    seed_demo(root=agent_memory_dir, realm="default", records=2000)
    start = threading.Barrier(6)
    answers: list[object] = []

    def first_search() -> None:
        start.wait()
        try:
            answers.append(search_index("default"))
        except Exception as error:  # noqa: BLE001 - the test reports whatever a thread met
            answers.append(error)

    threads = [threading.Thread(target=first_search) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert len(answers) == 6
    assert [type(answer).__name__ for answer in answers] == ["SearchIndex"] * 6
