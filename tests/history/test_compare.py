"""``/console/memory/changes/?realm=a&against=b``: two realms compared by logical key, scope and
title, as they stand and at a moment (docs/history.md §6)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from memory_panel.simulator.store_writer import ManualClock, StoreWriter, identity_scope
from tests.support.history import HOUR_MS, LUKA, START, Script

pytestmark = pytest.mark.django_db

CHANGES = "/console/memory/changes/"
BLUE = "team:blue"


def listed(page: str, block: str) -> list[str]:
    found = re.search(rf'<ul id="{block}">(.*?)</ul>', page, re.S)
    return [html.unescape(memory_id) for memory_id in re.findall(r'<li data-memory-id="([^"]*)"', found.group(1))]


@pytest.fixture
def blue(script: Script, agent_memory_dir: Path) -> dict[str, str]:
    clock = ManualClock(int(START.timestamp() * 1000) + HOUR_MS // 2)
    scope = identity_scope(BLUE, LUKA)
    with StoreWriter.create(BLUE, root=agent_memory_dir, clock=clock) as writer:
        return {
            "route": writer.remember(scope, "Route to the summit", "Take the south ridge first, then the saddle."),
            "closed": writer.remember(scope, "Summit closed on Friday", "Heard at the hut."),
            "only": writer.remember(scope, "Water at the saddle", "A spring below the saddle."),
        }


def test_two_realms_as_they_stand(client, signed_in, script: Script, blue: dict[str, str]):
    signed_in()
    response = client.get(CHANGES, {"realm": "default", "against": BLUE})
    assert response.status_code == 200
    page = response.content.decode()
    assert listed(page, "compare-only-realm") == []
    assert listed(page, "compare-only-against") == [blue["route"], blue["only"]]  # by key: "Route…", "Water…"
    assert listed(page, "compare-differing") == [script.released]
    assert "0 alike in both" in page


def test_two_realms_at_a_moment(client, signed_in, script: Script, blue: dict[str, str]):
    signed_in()
    page = client.get(CHANGES, {"realm": "default", "against": BLUE, "as_of": script.between("supersede")}).content.decode()
    assert listed(page, "compare-only-realm") == []
    assert listed(page, "compare-differing") == []
    assert set(listed(page, "compare-only-against")) == {blue["closed"], blue["only"]}
    assert "1 alike in both" in page


def test_a_realm_against_itself_or_an_unknown_one_is_a_400(client, signed_in, script: Script):
    signed_in()
    assert client.get(CHANGES, {"realm": "default", "against": "default"}).status_code == 400
    assert client.get(CHANGES, {"realm": "default", "against": "nowhere"}).status_code == 400
