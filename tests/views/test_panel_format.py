"""memory_panel.templatetags.panel_format: human sizes and ages the pages show."""

from __future__ import annotations

import pytest

from django.urls import reverse

from memory_panel.templatetags.panel_format import age, human_bytes, pairs, record_url, relative_ms

NOW = 1_767_225_600_000


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "0 B"), (812, "812 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"), (33_554_432, "32.0 MiB"), ("12", "")],
)
def test_human_bytes(value, text):
    assert human_bytes(value) == text


@pytest.mark.parametrize(
    ("ago_ms", "text"),
    [(0, "just now"), (59_000, "just now"), (5 * 60_000, "5 min ago"), (3 * 3_600_000, "3 h ago"),
     (2 * 86_400_000, "2 d ago"), (45 * 86_400_000, "1 mo ago"), (400 * 86_400_000, "1 y ago"),
     (-2 * 3_600_000, "in 2 h")],
)
def test_relative_ms(ago_ms, text):
    assert relative_ms(NOW - ago_ms, now_ms=NOW) == text


def test_age_has_the_exact_time_in_its_title():
    html = age(NOW)

    assert html.startswith('<time datetime="2026-01-01T00:00:00.000+00:00" title="2026-01-01 00:00:00 UTC">')


def test_age_of_an_out_of_range_timestamp_shows_the_raw_number():
    assert age(10**20) == '<span class="muted">100000000000000000000</span>'


def test_pairs_never_trip_on_odd_json():
    assert pairs({"items": [1, 2], "session_id": "s-1"}) == [("items", "[1, 2]"), ("session_id", "s-1")]
    assert pairs(["not", "an", "object"]) == []


@pytest.mark.parametrize("memory_id", [
    "mem-1796220070913974387-1d8d-1d570-dceb7cdfdbe40b7d", "a.b_c-d", ".", "..", "...",
    "a b", "x/y", "ü", "~", "%41", "<script>", "a?b#c",
])
def test_a_record_link_is_what_reverse_gives_for_any_id(memory_id: str):
    # Lists build each row's link without resolving the URLconf; the link must not differ.
    assert record_url(memory_id) == reverse("memory-record", args=[memory_id])
    assert record_url(memory_id, "team:blue") == reverse("memory-record", args=[memory_id]) + "?realm=team%3Ablue"
