"""File names, content hashes, ids and tokens (docs/store-format.md §1.1, §4.4)."""

from __future__ import annotations

import hashlib
import os
import re

import pytest

from memory_panel.store.realms import decode_path_segment, encode_path_segment, realm_names
from memory_panel.simulator.store_writer import content_hash, fnv1a64, mint_token, new_memory_id, normalize_tags


@pytest.mark.parametrize(("realm", "segment"), [
    ("team:blue", "team%3Ablue"),
    ("identity:luka", "identity%3Aluka"),
    ("a.b", "a%2Eb"),
    ("..", "%2E%2E"),
    ("", "_"),
    ("plain-name_1", "plain-name_1"),
    ("zürich", "z%C3%BCrich"),
])
def test_realm_names_encode_and_decode_both_ways(realm, segment):
    assert encode_path_segment(realm) == segment
    if realm:
        assert decode_path_segment(segment) == realm


@pytest.mark.parametrize(("segment", "decoded"), [
    ("100%", "100%"), ("a%zz", "a%zz"), ("%4", "%4"), ("%3a", ":"), ("%FF", "\ufffd"),
])
def test_malformed_escapes_pass_through_and_bad_bytes_decode_lossily(segment, decoded):
    assert decode_path_segment(segment) == decoded


def test_realm_file_is_named_by_the_encoded_realm(realm_writer, agent_memory_dir):
    writer = realm_writer("team:blue")
    assert writer.path == agent_memory_dir / "team%3Ablue.sqlite3"
    assert realm_names() == ["team:blue"]


def test_content_hash_is_sha256_of_le_length_title_and_body():
    expected = hashlib.sha256(bytes([1, 0, 0, 0, 0, 0, 0, 0, 0x74, 0x62])).hexdigest()
    assert content_hash("t", "b") == expected
    # The length prefix keeps the title/body split unambiguous.
    assert content_hash("ab", "c") != content_hash("a", "bc")
    assert content_hash("é", "x") == hashlib.sha256(b"\x02" + b"\0" * 7 + "é".encode() + b"x").hexdigest()


def test_memory_id_format_and_fnv_over_title_then_body():
    memory_id = new_memory_id("Title", "Body")
    match = re.fullmatch(r"mem-(\d+)-([0-9a-f]+)-([0-9a-f]+)-([0-9a-f]{16})", memory_id)
    assert match
    assert int(match.group(2), 16) == os.getpid()
    assert int(match.group(4), 16) == fnv1a64(b"TitleBody")
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C  # the published FNV-1a 64 test vector


def test_ids_and_tokens_share_one_increasing_counter():
    first, second = mint_token("stage"), mint_token("prop")
    assert re.fullmatch(r"stage-\d+-[0-9a-f]+-[0-9a-f]+", first)
    assert re.fullmatch(r"prop-\d+-[0-9a-f]+-[0-9a-f]+", second)
    assert int(second.rsplit("-", 1)[1], 16) == int(first.rsplit("-", 1)[1], 16) + 1


def test_tags_are_trimmed_lowercased_deduplicated_and_sorted():
    assert normalize_tags([" Travel", "travel ", "", "  ", "ÉTÉ", "B"]) == ["b", "travel", "ÉtÉ"]  # ASCII-only lowercasing
