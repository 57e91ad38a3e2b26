"""Identity fields on Records, Recall and Knowledge: known identities suggested, and a bare name read as
identity:<name> when that is what exists (docs/search.md §8)."""

from __future__ import annotations

import re

import pytest

from memory_panel.simulator.store_writer import identity_scope
from tests.support.html import row_ids
from tests.support.postures import LEAD, SCOUT
from tests.support.worlds import LUKA_FACTS, write_panel_realm
from tests.support.written import new_scribe

pytestmark = pytest.mark.django_db

URL = "/console/memory/records/"
RECALL = "/console/memory/recall/"
KNOWLEDGE = "/console/memory/knowledge/"
# Every page with an identity field: one field, one list of suggestions, one reading of a bare name.
PAGES = {"records": URL, "recall": RECALL, "knowledge": KNOWLEDGE}


def suggestions(page: str) -> list[str]:
    datalist = re.search(r'<datalist id="known-identities">(.*?)</datalist>', page, re.S).group(1)
    return re.findall(r'<option value="([^"]*)">', datalist)


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize(("name", "want"), [("open", [LEAD, SCOUT]), ("scoped", [SCOUT]), ("none", [])])
def test_the_identity_field_suggests_the_identities_the_caller_may_read(client, world, posture, name, want, page):
    posture(name)
    assert suggestions(client.get(PAGES[page]).content.decode()) == want


def test_a_bare_name_means_identity_name_and_the_page_says_so(client, agent_memory_dir, signed_in):
    signed_in()
    write_panel_realm(agent_memory_dir)
    bare = client.get(URL, {"identity": "luka", "limit": "200"}).content.decode()
    full = client.get(URL, {"identity": "identity:luka", "limit": "200"}).content.decode()
    assert row_ids(bare) == row_ids(full) and len(row_ids(bare)) == LUKA_FACTS + 4
    assert "Showing <strong>identity:luka</strong>: no identity is named exactly “luka”." in bare
    assert "no identity is named exactly" not in full
    assert client.get("/console/memory/records.ndjson", {"identity": "luka"}).getvalue() == client.get(
        "/console/memory/records.ndjson", {"identity": "identity:luka"}
    ).getvalue()


def test_a_scope_key_of_that_exact_name_wins(client, agent_memory_dir, signed_in):
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    exact = s.remember(identity_scope("default", "luka"), "Bare", "keyed luka")
    s.remember(identity_scope("default", "identity:luka"), "Prefixed", "keyed identity:luka")
    s.writer.close()
    page = client.get(URL, {"identity": "luka"}).content.decode()
    assert row_ids(page) == [exact.id]
    assert "no identity is named exactly" not in page


def test_an_unknown_bare_name_is_left_as_typed(client, agent_memory_dir, signed_in):
    signed_in()
    write_panel_realm(agent_memory_dir)
    page = client.get(URL, {"identity": "nobody"}).content.decode()
    assert row_ids(page) == [] and "no identity is named exactly" not in page


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize(("name", "typed", "read_as"), [
    ("scoped", "scout", SCOUT), ("scoped", "lead", None), ("open", "lead", LEAD), ("none", "scout", None),
])
def test_a_bare_name_is_read_among_the_identities_the_caller_may_read(client, world, posture, name, typed, read_as,
                                                                       page):
    posture(name)
    page = client.get(PAGES[page], {"identity": typed}).content.decode()
    if read_as is None:  # an identity the caller may not read is never named, not even by the shorthand
        assert "no identity is named exactly" not in page
    else:
        assert f"Showing <strong>{read_as}</strong>: no identity is named exactly “{typed}”." in page


def test_recall_previews_identity_name_for_a_bare_name_and_says_so(client, agent_memory_dir, signed_in):
    signed_in()
    write_panel_realm(agent_memory_dir)
    bare = client.get(RECALL, {"identity": "luka", "query_text": "luka fact"}).content.decode()
    full = client.get(RECALL, {"identity": "identity:luka", "query_text": "luka fact"}).content.decode()

    def injected(page: str) -> str:
        return re.search(r'<pre class="recall-block">(.*?)</pre>', page, re.S).group(1)

    assert "Identity <code>identity:luka</code> in realm <code>default</code>" in bare
    assert "Showing <strong>identity:luka</strong>: no identity is named exactly “luka”." in bare
    assert injected(bare) == injected(full) and "Luka fact" in injected(bare)
    assert 'value="luka"' in bare  # the field keeps what was typed
    assert "no identity is named exactly" not in full


def test_knowledge_of_a_bare_name_is_knowledge_of_identity_name_and_says_so(client, agent_memory_dir, signed_in):
    signed_in()
    write_panel_realm(agent_memory_dir)
    bare = client.get(KNOWLEDGE, {"identity": "luka"}).content.decode()
    full = client.get(KNOWLEDGE, {"identity": "identity:luka"}).content.decode()

    def composition(page: str) -> str:
        return page.split('<ul class="composition"', 1)[1].split("</ul>", 1)[0]

    assert "Knowledge of <code>identity:luka</code>" in bare
    assert "Showing <strong>identity:luka</strong>: no identity is named exactly “luka”." in bare
    assert composition(bare) == composition(full)
    assert "no identity is named exactly" not in full


@pytest.mark.parametrize("page", ["recall", "knowledge"])
def test_on_recall_and_knowledge_a_scope_key_of_that_exact_name_wins(client, agent_memory_dir, signed_in, page):
    signed_in()
    s = new_scribe(agent_memory_dir, "default")
    s.remember(identity_scope("default", "luka"), "Bare", "keyed luka")
    s.remember(identity_scope("default", "identity:luka"), "Prefixed", "keyed identity:luka")
    s.writer.close()
    html = client.get(PAGES[page], {"identity": "luka", "query_text": "keyed"}).content.decode()
    assert "<code>luka</code>" in html and "no identity is named exactly" not in html
