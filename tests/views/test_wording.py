"""memory_panel.wording: MobKit's wire values as pages say them (docs/daily-use.md §8)."""

from __future__ import annotations

import pytest

from memory_panel.wire.rust_debug import author_debug
from memory_panel.wording import author_words, value_words

AUTHORS = [
    ({"author": "agent", "identity": "identity:router"}, "agent identity:router"),
    ({"author": "steward", "run_id": "dream-7"}, "steward (dream dream-7)"),
    ({"author": "distiller", "run_id": "d-1"}, "distiller (run d-1)"),
    ({"author": "operator"}, "operator"),
    ({"author": "application"}, "application"),
    ({"author": "agent", "identity": 'say "hi"\\now'}, 'agent say "hi"\\now'),
]


@pytest.mark.parametrize(("author", "words"), AUTHORS)
def test_an_author_reads_the_same_stored_or_as_the_wire_debug_string(author, words):
    assert author_words(author) == words
    assert author_words(author_debug(author)) == words


@pytest.mark.parametrize(("author", "words"), [
    (None, "an unknown author"), ("", "an unknown author"), ({"identity": "x"}, "an unknown author"),
    ("not a debug string {", "not a debug string {"), (42, "an unknown author"),
])
def test_an_odd_author_never_raises(author, words):
    assert author_words(author) == words


@pytest.mark.parametrize(("value", "words"), [
    (True, "yes"), (False, "no"), (None, "—"), ("agent_observed", "agent observed"),
    ("open_loop_escalated", "open loop escalated"), ("active", "active"), ("identity:luka", "identity:luka"),
    ("web_fetch'", "web_fetch'"), (3, "3"),
])
def test_flags_and_enums_read_as_words(value, words):
    assert value_words(value) == words


def test_pipeline_writes_proposal_authors_as_words(client_for, demo_realms):
    pipeline = client_for().get("/console/memory/pipeline/").content.decode()

    assert "Agent {" not in pipeline and "agent identity:" in pipeline


def test_biography_writes_its_author_as_words(client_for, realm):
    biography = client_for().get(f"/console/memory/records/{realm.ids['seat_v1']}/").content.decode()

    assert "agent identity:luka" in biography and "(identity: " not in biography
