"""Contextual recall over real realm files: tokenizer, scores, order, block (docs/runtime-surfaces.md §4)."""

from __future__ import annotations

import pytest

from memory_panel.selectors.recall import PREAMBLE, RecallRequest, recall_preview, tokenize
from memory_panel.simulator.store_writer import agent, identity_scope, mob_scope
from access.caller import Caller, access_for

pytestmark = pytest.mark.django_db

SCOUT = "identity:scout"
T0 = 1_700_000_000_000


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("The quick brown fox", {"quick", "brown", "fox"}),
        ("PY-MEM-18 identity:luka", {"py-mem-18", "identity", "luka"}),
        ("snake_case, dotted.name!", {"snake_case", "dotted", "name"}),
        ("an to of is ab", set()),  # shorter than 3 bytes
        ("Should WOULD Their what about", set()),  # stopwords, any case
        ("naïve café", {"caf"}),  # non-ASCII letters separate tokens
        ("", set()),
    ],
)
def test_tokenizer(text, terms):
    assert tokenize(text) == terms


@pytest.fixture
def scout_realm(realm_writer, settings):
    """Four active records for identity:scout, one a minute apart (oldest first)."""
    settings.MOBKIT_ACCESS_CONFIG = None
    writer = realm_writer("default")
    scope = identity_scope("default", SCOUT)
    ids = {}
    for n, (key, title, body, tags) in enumerate(
        [
            ("plans", "Paris travel plans", "Flying to Paris on Monday with the team", ["travel"]),
            ("diet", "Diet", "Vegetarian since 2019, avoids fish", []),
            ("hotel", "Hotel booking", "Booked the Parisian hotel near the station", ["paris"]),
            ("offsite", "Team offsite", "Offsite planning in Lisbon", []),
            ("dietary", "Dietary notes", "Prefers dietary variety", []),
        ]
    ):
        stamp = T0 + n * 60_000
        ids[key] = writer.remember(scope, title, body, tags=tags, id=f"mem-{key}",
                                   created_at_ms=stamp, updated_at_ms=stamp)
    return writer, ids


def preview(query: str, *, identity: str = SCOUT, realm: str | None = None, max_entries: int = 8):
    request = RecallRequest(identity=identity, query_text=query, realm=realm, max_entries=max_entries)
    return recall_preview(access=access_for(Caller(subject=None)), request=request).as_json()


def picked(result: dict) -> list[tuple[str, int, list[str]]]:
    return [(s["memory_id"], s["score"], s["matched_terms"]) for s in result["selected"]]


# Worked by hand from §4.2 (+5 tag token; +4 title token else +1 title substring for ≥5 chars;
# +2 body token else +1 body substring for ≥5 chars; keep score ≥ 2).
@pytest.mark.parametrize(
    ("query", "terms", "expected"),
    [
        # travel: plans tag 5 + title 4 = 9; paris: plans title 4 + body 2 = 6 → 15.
        # hotel: paris tag 5 + body substring of "parisian" 1 = 6.
        ("travel to Paris", ["paris", "travel"], [("mem-plans", 15, ["paris", "travel"]), ("mem-hotel", 6, ["paris"])]),
        # offsite: title 4 + body 2 = 6; plans: "Paris travel plans" title token 4.
        # "planning" does not contain "plans", so offsite gets nothing for it.
        ("plans for the offsite", ["offsite", "plans"], [("mem-offsite", 6, ["offsite"]), ("mem-plans", 4, ["plans"])]),
        # diet (4 chars) is too short for substring credit: "Dietary notes" scores 0 for it.
        ("fish diet", ["diet", "fish"], [("mem-diet", 6, ["diet", "fish"])]),
        # dietary: title 4 + body 2 on mem-dietary only; "diet" ≠ "dietary" as tokens.
        ("dietary", ["dietary"], [("mem-dietary", 6, ["dietary"])]),
        # lisbo: a 5-char substring of the body only → 1, below the threshold of 2.
        ("lisbo", ["lisbo"], []),
        # parisian: body token 2 → kept at exactly the threshold.
        ("parisian", ["parisian"], [("mem-hotel", 2, ["parisian"])]),
        # only stopwords and short words: no terms, nothing recalled.
        ("what about the to it", [], []),
    ],
)
def test_selection_and_scores(scout_realm, query, terms, expected):
    result = preview(query)
    assert result["realm"] == "default" and result["identity"] == SCOUT
    assert result["query_terms"] == terms
    assert picked(result) == expected


def test_ties_order_by_updated_then_created_then_disk_order(realm_writer, settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    writer = realm_writer("default")
    scope = identity_scope("default", SCOUT)
    rows = [  # (id, created, updated) — every one scores 4 (title token "kayak")
        ("mem-old", T0, T0),
        ("mem-b", T0 + 5, T0 + 10),
        ("mem-a", T0 + 5, T0 + 10),  # same created and updated as mem-b: id order on disk
        ("mem-early-created", T0 + 1, T0 + 20),
        ("mem-late-created", T0 + 2, T0 + 20),
    ]
    for memory_id, created, updated in rows:
        writer.remember(scope, "Kayak", f"body of {memory_id}", id=memory_id,
                        created_at_ms=created, updated_at_ms=updated)
    assert [m for m, score, _ in picked(preview("kayak"))] == [
        "mem-late-created", "mem-early-created", "mem-a", "mem-b", "mem-old",
    ]


def test_only_active_identity_records_of_that_identity_are_recalled(scout_realm):
    writer, ids = scout_realm
    scope = identity_scope("default", SCOUT)
    newer = writer.supersede(ids["diet"], "Fish diet update", "Now eats fish again")
    writer.forget(ids["offsite"])
    writer.remember(scope, "Fish market", "Visit the fish market", author=agent(SCOUT), gate_reason="tainted")
    writer.remember(mob_scope("default", "crew"), "Fish for the crew", "Mob-scoped fish")
    writer.remember(identity_scope("default", "identity:lead"), "Lead fish", "Another identity's fish")
    assert picked(preview("fish offsite")) == [(newer, 6, ["fish"])]  # title 4 + body 2


def test_max_entries_truncates_after_ordering(scout_realm):
    # plans 15; hotel 6 and dietary 6 tie on score, and the newer (dietary) ranks first.
    assert [m for m, *_ in picked(preview("travel paris dietary"))] == ["mem-plans", "mem-dietary", "mem-hotel"]
    assert [m for m, *_ in picked(preview("travel paris dietary", max_entries=2))] == ["mem-plans", "mem-dietary"]


def test_injected_block_is_mobkits_quoted_observation_text(realm_writer, settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    writer = realm_writer("default")
    scope = identity_scope("default", SCOUT)
    writer.remember(scope, 'Quote "me" <now>', "Line one\n\n  line two & <b>three</b>", id="mem-1",
                    created_at_ms=T0, updated_at_ms=T0)
    writer.remember(scope, "Second  note", "Plain quote body", id="mem-2", created_at_ms=T0 - 1, updated_at_ms=T0 - 1)
    result = preview("quote")
    assert result["injected_block"] == (
        f"Agent memory for identity `{SCOUT}` in realm `default`:\n"
        f"{PREAMBLE}\n"
        '<mobkit_memory_observation index="1" title="Quote &quot;me&quot; &lt;now&gt;">'
        "Line one line two &amp; &lt;b&gt;three&lt;/b&gt;</mobkit_memory_observation>\n"
        '<mobkit_memory_observation index="2" title="Second note">Plain quote body</mobkit_memory_observation>'
    )


def test_no_selection_means_no_block(scout_realm):
    assert preview("nothing-matches-this")["injected_block"] == ""


def test_title_and_body_caps_cut_on_utf8_boundaries(realm_writer, settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    writer = realm_writer("default")
    scope = identity_scope("default", SCOUT)
    # title: "caps " (5 bytes) + 97 × "é" (2 bytes each) = 199 bytes; byte 160 falls inside the
    # 78th "é", so the cut keeps "caps " + 77 × "é" (154 bytes + 5)
    writer.remember(scope, "caps " + "é" * 97, "cap " + "word " * 600, id="mem-long",
                    created_at_ms=T0, updated_at_ms=T0)
    block = preview("cap")["injected_block"]
    assert f'title="caps {"é" * 77} [truncated]"' in block
    # body: compacted "cap word word …" cut at 2048 bytes, then " [truncated]"
    body = ("cap " + "word " * 600).strip()[:2048]
    assert f'">{body} [truncated]</mobkit_memory_observation>' in block


def test_escaped_body_is_recut_to_4_kib(realm_writer, settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    writer = realm_writer("default")
    # 2000 "<" fit the 2048-byte cut, but escape to 8000 bytes: re-cut to 4096 = 1024 × "&lt;"
    writer.remember(identity_scope("default", SCOUT), "Angles", "<" * 2000, id="mem-angles",
                    created_at_ms=T0, updated_at_ms=T0)
    block = preview("angles")["injected_block"]
    assert block.endswith('title="Angles">' + "&lt;" * 1024 + " [truncated]</mobkit_memory_observation>")


def test_assembly_stops_at_the_first_block_over_20_kib(realm_writer, settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    writer = realm_writer("default")
    scope = identity_scope("default", SCOUT)
    writer.remember(scope, "Budget small", "tiny", id="mem-small", created_at_ms=T0, updated_at_ms=T0)
    for n in range(1, 11):  # newer than the small one, so they rank first (all score 4)
        writer.remember(scope, f"Budget {n:02d}", chr(96 + n) * 2048, id=f"mem-{n:02d}",
                        created_at_ms=T0 + n, updated_at_ms=T0 + n)
    result = preview("budget", max_entries=64)
    assert len(result["selected"]) == 11
    block = result["injected_block"]
    # header 271 bytes; blocks 1–9 are 2132 bytes each (84 of markup + 2048 of body) → 19459;
    # block 10 (2133 bytes, two-digit index) would reach 21592 > 20480, so iteration stops there
    # and the small 11th record is not injected although it alone would still fit.
    assert len(block.encode("utf-8")) == 271 + 9 * 2132
    assert block.count("<mobkit_memory_observation") == 9
    assert 'index="9" title="Budget 02"' in block and "Budget small" not in block


def test_realm_defaults_to_the_first_realm_holding_the_identitys_records(realm_writer, settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    realm_writer("alpha").remember(identity_scope("alpha", "identity:lead"), "Kayak", "lead only")
    realm_writer("beta").remember(identity_scope("beta", SCOUT), "Kayak", "scout in beta")
    realm_writer("gamma").remember(identity_scope("gamma", SCOUT), "Kayak", "scout in gamma")
    assert preview("kayak")["realm"] == "beta"
    assert preview("kayak", realm="gamma")["realm"] == "gamma"
    assert preview("kayak", identity="identity:nobody") == {
        "realm": None, "identity": "identity:nobody", "query_terms": ["kayak"],
        "selected": [], "injected_block": "",
    }
