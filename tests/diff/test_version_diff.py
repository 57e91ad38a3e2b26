"""What changed on a lineage step: word-level differences, linkable by ?diff=<memory_id>."""

from __future__ import annotations

import pytest

from memory_panel.selectors.diff import FieldDiff, word_diff
from memory_panel.simulator.store_writer import identity_scope
from tests.support.written import new_scribe

pytestmark = pytest.mark.django_db

REMOVED = '<del class="diff-removed"><span class="visually-hidden">[removed: </span>'
ADDED = '<ins class="diff-added"><span class="visually-hidden">[added: </span>'
END = '<span class="visually-hidden">]</span>'


@pytest.mark.parametrize(
    ("before", "after", "segments"),
    [
        ("same words", "same words", (("same", "same words"),)),
        ("north ridge first", "south ridge first",
         (("removed", "north"), ("added", "south"), ("same", " ridge first"))),
        ("a b", "a b c", (("same", "a b"), ("added", " c"))),
        ("a b c", "a c", (("same", "a "), ("removed", "b "), ("same", "c"))),
        ("", "new", (("added", "new"),)),
        ("line one\nline two", "line one\nline 2",
         (("same", "line one\nline "), ("removed", "two"), ("added", "2"))),
    ],
)
def test_word_diff(before, after, segments):
    assert word_diff(before, after) == segments
    assert "".join(t for op, t in segments if op != "added") == before
    assert "".join(t for op, t in segments if op != "removed") == after


@pytest.mark.parametrize(
    ("before", "after", "shown"),
    [
        ("Tomas at noon", "Update confirmed at noon",
         (("removed", "Tomas"), ("same", " "), ("added", "Update confirmed"), ("same", " at noon"))),
        ("a b", "a b c", (("same", "a b"), ("same", " "), ("added", "c"))),
        ("a b c", "a c", (("same", "a "), ("removed", "b"), ("same", " "), ("same", "c"))),
        ("a b", "ab", (("removed", "a b"), ("same", " "), ("added", "ab"))),
    ],
)
def test_shown_diff_marks_words_only_and_never_runs_a_removed_word_into_an_added_one(before, after, shown):
    assert FieldDiff("body", word_diff(before, after)).shown == shown


@pytest.fixture
def chain(agent_memory_dir, signed_in):
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    v1 = s.remember(identity_scope("default", "identity:scout"), "Route", "North ridge <b>first</b>", tags=["routes"])
    v2 = s.supersede(v1, "Route v2", "South ridge <b>first</b>")
    s.writer.close()
    return v1, v2


def test_biography_shows_the_chosen_steps_changes_escaped(client, chain):
    v1, v2 = chain
    url = f"/console/memory/records/{v2.id}/"
    page = client.get(url).content.decode()
    assert f'href="?realm=default&amp;diff={v2.id}#diff"' in page  # each step links its change
    assert 'id="diff"' not in page
    page = client.get(url, {"diff": v2.id}).content.decode()
    assert '<section id="diff"' in page
    assert (f"{REMOVED}North{END}</del> {ADDED}South{END}</ins> ridge &lt;b&gt;first&lt;/b&gt;") in page
    assert f'<dd class="diff-text">Route {ADDED}v2{END}</ins></dd>' in page
    assert "tags <span class=\"muted small\">(unchanged)</span>" in page
    assert 'aria-current="step"' in page


def test_a_step_without_a_prior_or_an_unknown_id_is_a_clear_error(client, chain):
    v1, _ = chain
    response = client.get(f"/console/memory/records/{v1.id}/", {"diff": v1.id})
    assert response.status_code == 400
    assert "supersedes no record" in response.content.decode()
    assert client.get(f"/console/memory/records/{v1.id}/", {"diff": "nope"}).status_code == 404


def test_a_prior_the_caller_may_not_read_is_no_grant_not_its_text(client, world, posture):
    posture("reader")  # no quarantine review: the quarantined claimant's text is reviewer-only
    route_v2, claimant = world["route_v2"], world["claimant"]
    page = client.get(f"/console/memory/records/{route_v2.id}/", {"diff": claimant.id}).content.decode()
    assert claimant.body not in page
    assert "One of these versions" in page  # the section says "no grant" instead
