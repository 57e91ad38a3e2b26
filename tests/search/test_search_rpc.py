"""mobkit/memory/panel/search over store-writer realms: matching, ranking, filters, cursors, freshness.

Expected results are worked out here from what the test wrote, with the matching rule the
contract states (every word or quoted phrase, in title, body or tags; no stemming; case and
diacritics folded), never by asking the console's search code.
"""

from __future__ import annotations

import pytest

from memory_panel.search_text import MARK_END, MARK_START
from memory_panel.simulator.store_writer import identity_scope, mob_scope, realm_scope
from tests.support.matching import matches
from tests.support.rpc import PANEL, call, invalid_params, panel
from tests.support.written import Written, new_scribe

pytestmark = pytest.mark.django_db

SCOUT, LEAD = "identity:scout", "identity:lead"


def ids(reply) -> list[str]:
    return [r["id"] for r in reply.result["records"]]


@pytest.fixture
def corpus(agent_memory_dir, signed_in):
    signed_in()
    rows: dict[str, Written] = {}
    s = new_scribe(agent_memory_dir, "default", rows=rows)
    scout, lead = identity_scope("default", SCOUT), identity_scope("default", LEAD)
    named = {
        "tea": s.remember(scout, "Green tea", "Scout drinks green tea before every climb", tags=["drinks"]),
        "coffee": s.remember(scout, "Coffee", "Never green coffee; tea is fine", tags=["drinks"]),
        "climbing": s.remember(lead, "Climbing plan", "The lead is climbing the north face"),
        "cafe": s.remember(lead, "Café Ümlaut", "Meet at the CAFÉ near the station"),
        "tagged": s.remember(mob_scope("default", "ops"), "Relay", "Restart it on Mondays", tags=["tea-time"]),
        "realm": s.remember(realm_scope("default"), "Realm rule", "Tea for everyone in the realm"),
    }
    s.writer.close()
    other = new_scribe(agent_memory_dir, "other", rows=rows, start_ms=1_800_000_000_000)
    named["other"] = other.remember(identity_scope("other", SCOUT), "Tea in another realm", "green tea too")
    other.writer.close()
    return rows, named


def search(client, **params):
    return panel(client, "search", params)


def test_every_word_must_match_somewhere_in_title_body_or_tags(client, corpus):
    rows, _ = corpus
    for query, terms in (("green tea", ("green", "tea")), ("tea", ("tea",)), ("drinks climb", ("drinks", "climb"))):
        want = {r.id for r in rows.values() if matches(r, *terms)}
        assert set(ids(search(client, query=query))) == want, query


def test_quoted_phrase_matches_the_words_in_that_order_only(client, corpus):
    _, named = corpus
    assert set(ids(search(client, query='"green tea"'))) == {named["tea"].id, named["other"].id}
    assert ids(search(client, query='"tea green"')) == []
    assert set(ids(search(client, query='"green coffee" tea'))) == {named["coffee"].id}


def test_no_stemming_a_word_matches_only_itself(client, corpus):
    _, named = corpus
    assert ids(search(client, query="climb")) == [named["tea"].id]
    assert ids(search(client, query="climbing")) == [named["climbing"].id]


def test_case_and_diacritics_are_folded(client, corpus):
    _, named = corpus
    for query in ("cafe", "CAFÉ", "ümlaut", "umlaut"):
        assert ids(search(client, query=query)) == [named["cafe"].id], query


def test_tags_are_searched(client, corpus):
    _, named = corpus
    assert ids(search(client, query="time")) == [named["tagged"].id]
    assert named["tagged"].id in ids(search(client, query="tea"))


def test_title_matches_rank_above_body_matches_and_scores_descend(client, corpus):
    _, named = corpus
    reply = search(client, query="coffee")
    assert ids(reply) == [named["coffee"].id]
    found = search(client, query="tea", realm="default").result["records"]
    assert found[0]["id"] == named["tea"].id  # "tea" in its title and twice in its body
    scores = [r["score"] for r in found]
    assert scores == sorted(scores, reverse=True)


def test_equal_scores_come_newest_first(client, agent_memory_dir, signed_in):
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    twins = [s.remember(identity_scope("default", SCOUT), "Same", f"identical words {n}") for n in ("one", "two", "six")]
    s.writer.close()
    found = search(client, query="identical").result["records"]
    assert [r["id"] for r in found] == [r.id for r in sorted(twins, key=lambda r: (r.updated_at_ms, r.id), reverse=True)]
    assert len({r["score"] for r in found}) == 1


def test_results_carry_the_records_list_row_plus_snippet_and_score(client, corpus):
    _, named = corpus
    row = search(client, query="station").result["records"][0]
    want = named["cafe"].list_row()
    assert {k: v for k, v in row.items() if k not in ("snippet", "score")} == want
    assert row["snippet"] == f"Meet at the CAFÉ near the {MARK_START}station{MARK_END}"
    assert isinstance(row["score"], float) and row["score"] > 0


def test_snippet_marks_every_word_and_whole_phrases(client, corpus):
    _, named = corpus
    reply = search(client, query='"green tea" climb', realm="default").result["records"]
    assert reply[0]["snippet"] == (
        f"Scout drinks {MARK_START}green tea{MARK_END} before every {MARK_START}climb{MARK_END}"
    )


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"query": "tea", "realm": "other"}, {"other"}),
        ({"query": "tea", "scope": "mob"}, {"tagged"}),
        ({"query": "tea", "scope": "realm"}, {"realm"}),
        ({"query": "tea", "identity": SCOUT}, {"tea", "coffee", "other"}),
        ({"query": "tea", "identity": SCOUT, "realm": "default"}, {"tea", "coffee"}),
        ({"query": "tea", "scope": "identity", "scope_key": LEAD}, set()),
        ({"query": "station", "scope": "identity", "scope_key": LEAD}, {"cafe"}),
    ],
)
def test_realm_and_scope_filters(client, corpus, params, want):
    _, named = corpus
    reply = search(client, **params)
    assert set(ids(reply)) == {named[n].id for n in want}, params
    assert reply.result["realms"] == ([params["realm"]] if "realm" in params else ["default", "other"])


def test_status_defaults_to_active_and_can_be_asked_for(client, agent_memory_dir, signed_in):
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    old = s.remember(identity_scope("default", SCOUT), "Route", "north ridge route")
    new = s.supersede(old, "Route v2", "south ridge route")
    gone = s.remember(identity_scope("default", SCOUT), "Old camp", "ridge camp")
    s.forget(gone)
    s.writer.close()
    assert ids(search(client, query="ridge")) == [new.id]
    assert ids(search(client, query="ridge", status="superseded")) == [old.id]
    assert ids(search(client, query="ridge", status="tombstoned")) == [gone.id]


def test_a_write_is_found_by_the_next_search(client, agent_memory_dir, signed_in):
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    first = s.remember(identity_scope("default", SCOUT), "Kettle", "the kettle is blue")
    assert ids(search(client, query="kettle")) == [first.id]
    later = s.remember(identity_scope("default", SCOUT), "Kettle two", "a second kettle")
    assert set(ids(search(client, query="kettle"))) == {first.id, later.id}
    successor = s.supersede(first, "Kettle", "the kettle is red now")
    assert set(ids(search(client, query="kettle"))) == {later.id, successor.id}
    assert ids(search(client, query="blue")) == []
    assert ids(search(client, query="blue", status="superseded")) == [first.id]
    s.writer.close()


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 100])
def test_cursor_walk_returns_every_match_exactly_once(client, agent_memory_dir, signed_in, limit):
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    t = new_scribe(agent_memory_dir, "second", start_ms=1_700_000_000_500)
    want = set()
    for n in range(12):
        # Scores repeat (same texts) and timestamps tie across the two realms.
        writer = s if n % 2 else t
        text = "walk " * (1 + n % 3)
        want.add(writer.remember(identity_scope(writer.realm, SCOUT), f"Walk {n}", text).id)
        writer.clock.set(s.clock())
    s.remember(identity_scope("default", SCOUT), "Unrelated", "nothing here")
    s.writer.close()
    t.writer.close()
    seen: list[str] = []
    keys: list[tuple] = []
    cursor = None
    for _ in range(50):  # guard against a walk that never ends
        reply = search(client, query="walk", limit=limit, **({"cursor": cursor} if cursor else {}))
        records = reply.result["records"]
        assert len(records) <= limit
        seen += [r["id"] for r in records]
        keys += [(-r["score"], -r["updated_at_ms"]) for r in records]
        cursor = reply.result["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(want) and len(seen) == len(want)
    assert keys == sorted(keys)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "query is required: give one or more words to search for"),
        ({"query": "   "}, "query is required: give one or more words to search for"),
        ({"query": 7}, "query is required: give one or more words to search for"),
        ({"query": '"green tea'}, 'query has an unclosed quote (")'),
        ({"query": "!!! ---"}, "query has no words to search for (letters or digits)"),
        ({"query": "x" * 501}, "query is longer than 500 characters"),
        ({"query": " ".join(f"w{n}" for n in range(17))}, "query has more than 16 words and phrases"),
        ({"query": "tea", "cursor": "12:abc"}, "malformed cursor"),
        ({"query": "tea", "cursor": "s1.!!!"}, "malformed cursor"),
        ({"query": "tea", "cursor": 5}, "malformed cursor"),
        ({"query": "tea", "scope": "galaxy"}, "unknown scope 'galaxy'"),
        ({"query": "tea", "realm": "nowhere"}, "unknown realm 'nowhere'"),
    ],
)
def test_bad_params_are_invalid_params_naming_the_problem(client, corpus, params, message):
    assert search(client, **params).error == invalid_params(message)


def test_a_cursor_resumes_only_the_search_it_came_from(client, corpus):
    cursor = search(client, query="tea", limit=1).result["next_cursor"]
    assert cursor is not None
    assert search(client, query="green", cursor=cursor).error == invalid_params(
        "cursor belongs to another query or filters: start again without it"
    )


def test_search_is_advertised_and_never_writes_a_realm_file(client, corpus, agent_memory_dir):
    before = {p.name: p.read_bytes() for p in agent_memory_dir.glob("*.sqlite3")}
    assert PANEL + "search" in call(client, "mobkit/capabilities").result["methods"]
    search(client, query="tea")
    assert {p.name: p.read_bytes() for p in agent_memory_dir.glob("*.sqlite3")} == before
    # The documents live in the console's own storage: across realms, small realms' in one index.
    assert (agent_memory_dir.parent / "console" / "all-realms.sqlite3").is_file()
    search(client, query="tea", realm="default")
    assert list((agent_memory_dir.parent / "console" / "search-index").glob("*/gen-*.sqlite3"))


@pytest.mark.parametrize("limit", [1, 4, 9])
def test_a_very_common_word_is_ranked_in_windows_and_walked_exactly_once(client, agent_memory_dir, signed_in,
                                                                        monkeypatch, limit):
    from memory_panel.store import search_index

    # Small thresholds stand in for a million rows: more than 3 matches means windows of ~2.
    monkeypatch.setattr(search_index, "RANK_ALL", 3)
    monkeypatch.setattr(search_index, "RANK_WINDOW", 2)
    monkeypatch.setattr(search_index, "DENSITY_SAMPLE", 8)
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    t = new_scribe(agent_memory_dir, "second")
    want = {w.remember(identity_scope(w.realm, SCOUT), f"Common {n}", "common " * (1 + n % 4)).id
            for n in range(20) for w in ([s] if n % 3 else [t])}
    s.writer.close()
    t.writer.close()
    seen, cursor = [], None
    for _ in range(100):
        reply = search(client, query="common", limit=limit, **({"cursor": cursor} if cursor else {}))
        seen += ids(reply)
        cursor = reply.result["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(want)
    first = search(client, query="common", limit=3).result["records"]
    assert first[0]["id"] in {r for r in want}
