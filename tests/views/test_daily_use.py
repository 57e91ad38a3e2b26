"""The operator's daily use (docs/daily-use.md): the realm choice, URLs that carry the list's state,
the reviewer's queue, labels and error pages that explain themselves."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from memory_panel.templatetags.panel_format import scope_label, waited_ms
from tests.support.clients import choose_realm
from tests.support.postures import READER, REVIEWER
from tests.support.worlds import LUKA_FACTS, write_panel_realm
from tests.support.worlds import PANEL_QUARANTINED_BODY as QUARANTINED_BODY

RECORDS = "/console/memory/records/"
SELECTED_BLUE = '<option value="team:blue" selected>team:blue</option>'


@pytest.fixture
def two_realms(agent_memory_dir):
    return write_panel_realm(agent_memory_dir, "default"), write_panel_realm(agent_memory_dir, "team:blue")


def realms_listed(page: str) -> set[str]:
    return set(re.findall(r'href="/console/memory/records/mem-[^"?]+/\?realm=([^"&]+)"', page))


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


# ---------------------------------------------------------------------------------------------
# The realm choice follows the operator


def test_realm_chosen_with_the_switcher_stays_chosen_on_records(client_for, two_realms):
    client = client_for()
    choose_realm(client, "team:blue")

    page = client.get(RECORDS, {"limit": "200"}).content.decode()

    assert realms_listed(page) == {"team%3Ablue"}
    assert SELECTED_BLUE in page  # the header says which realm the page shows


@pytest.mark.parametrize("asked", ["team:blue", ""])
@pytest.mark.parametrize(
    "path",
    ["/console/memory/", RECORDS, "/console/memory/quarantine/", "/console/memory/dreams/",
     "/console/memory/pipeline/", "/console/memory/knowledge/", "/console/memory/holdings/taint-wall/"],
)
def test_a_realm_link_shows_its_realm_without_changing_the_choice(client_for, two_realms, path, asked):
    client = client_for()
    choose_realm(client, "default")

    linked = client.get(path, {"realm": asked}, follow=True)
    after = client.get(RECORDS, {"limit": "200"}).content.decode()

    assert linked.status_code == 200
    assert SELECTED_BLUE not in linked.content.decode()  # the header still shows the remembered choice
    assert '<option value="default" selected>default</option>' in after
    assert realms_listed(after) == {"default"}


def test_a_realm_link_on_records_lists_that_realm_only(client_for, two_realms):
    client = client_for()

    page = client.get(RECORDS, {"realm": "team:blue", "limit": "200"}).content.decode()

    assert realms_listed(page) == {"team%3Ablue"}
    assert realms_listed(client.get(RECORDS, {"limit": "200"}).content.decode()) == {"default", "team%3Ablue"}


def realm_notes(page: str) -> list[str]:
    return re.findall(r'<span class="realm-note small muted"> · realm ([^<]+)</span>', page)


@pytest.mark.parametrize(
    ("path", "realms"),
    [("/console/memory/pipeline/", {"default"}),
     ("/console/memory/knowledge/?identity=identity:ana", {"default"}),
     ("/console/memory/holdings/taint-wall/", {"default"}),
     ("/console/memory/", {"default"})],
)
def test_an_all_realms_page_says_which_realm_each_row_is_from(client_for, demo_realms, path, realms):
    client = client_for()

    assert set(realm_notes(client.get(path).content.decode())) == realms
    assert realm_notes(client.get(path, {"realm": "default"}).content.decode()) == []


@pytest.mark.parametrize(
    "path",
    ["/console/", "/console/memory/", RECORDS, "/console/memory/quarantine/", "/console/memory/dreams/",
     "/console/memory/ledger/", "/console/memory/recall/", "/console/memory/legacy/", "/console/timeline/"],
)
def test_header_shows_the_chosen_realm_on_every_page(client_for, two_realms, path):
    client = client_for()
    choose_realm(client, "team:blue")

    page = client.get(path).content.decode()

    assert 'action="/console/memory/realm/"' in page
    assert SELECTED_BLUE in page


def test_header_shows_the_chosen_realm_on_a_biography(client_for, two_realms):
    default, _ = two_realms
    client = client_for()
    choose_realm(client, "team:blue")

    page = client.get(f"{RECORDS}{default.ids['seat_v1']}/", {"realm": "default"}).content.decode()

    assert "Prefers window seats" in page  # the record's own realm pin still decides what is shown
    assert SELECTED_BLUE in page  # and visiting it did not change the choice


def test_switching_to_all_realms_clears_the_choice(client_for, two_realms):
    client = client_for()
    choose_realm(client, "team:blue")
    choose_realm(client, "")

    page = client.get(RECORDS, {"limit": "200"}).content.decode()

    assert realms_listed(page) == {"default", "team%3Ablue"}


def test_switcher_remembers_the_realm_and_returns_to_the_page_without_its_list_position(client_for, two_realms):
    client = client_for()
    response = client.post(
        "/console/memory/realm/",
        {"realm": "team:blue", "next": f"{RECORDS}?scope=identity&realm=default&shown=60&cursor=abc"},
    )

    assert response.status_code == 303
    assert response["Location"] == f"{RECORDS}?scope=identity"
    assert realms_listed(client.get(RECORDS, {"limit": "200"}).content.decode()) == {"team%3Ablue"}


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", ""])
def test_switcher_never_redirects_off_the_console(client_for, two_realms, target):
    response = client_for().post("/console/memory/realm/", {"realm": "default", "next": target})

    assert response.status_code == 303
    assert response["Location"] == "/console/memory/"


def test_switcher_with_an_unknown_realm_says_so_on_the_console_page(client_for, two_realms):
    response = client_for().post("/console/memory/realm/", {"realm": "gone", "next": RECORDS})

    assert response.status_code == 400
    assert "unknown realm &#x27;gone&#x27;" in response.content.decode()
    assert 'aria-label="Console sections"' in response.content.decode()


def test_switcher_refuses_get(client_for, two_realms):
    assert client_for().get("/console/memory/realm/", {"realm": "default"}).status_code == 405


def test_a_chosen_realm_whose_file_is_gone_falls_back_to_all_realms(client_for, two_realms, agent_memory_dir):
    client = client_for()
    choose_realm(client, "team:blue")
    for path in agent_memory_dir.glob("team*"):
        path.unlink()

    response = client.get(RECORDS, {"limit": "200"})

    assert response.status_code == 200
    assert realms_listed(response.content.decode()) == {"default"}


def test_recall_uses_the_chosen_realm(client_for, two_realms):
    client = client_for()
    choose_realm(client, "team:blue")

    page = client.get("/console/memory/recall/", {"identity": "identity:luka", "query_text": "seats"}).content.decode()

    assert "in realm <code>team:blue</code>" in page


# ---------------------------------------------------------------------------------------------
# The URL carries what the page shows


def test_plain_submit_with_empty_filters_is_redirected_to_a_url_without_them(client_for, two_realms):
    response = client_for().get(RECORDS, {"scope": "", "identity": "identity:luka", "status": "", "kind": ""})

    assert response.status_code == 302
    assert response["Location"] == f"{RECORDS}?identity=identity%3Aluka"


def test_htmx_filter_pushes_the_url_without_empty_filters(client_for, two_realms):
    response = client_for().get(
        RECORDS, {"scope": "", "identity": "identity:luka", "trust": "", "limit": "5"}, HTTP_HX_REQUEST="true"
    )

    assert response.status_code == 200
    assert response["HX-Push-Url"] == f"{RECORDS}?identity=identity%3Aluka&limit=5"


def test_load_more_rewrites_the_url_with_how_many_rows_are_shown(client_for, two_realms):
    client = client_for()
    first = client.get(RECORDS, {"realm": "default", "identity": "identity:luka", "limit": "5"}).content.decode()
    more = re.search(r'hx-get="([^"]+)"', first.split('id="records-more"', 1)[1]).group(1).replace("&amp;", "&")

    response = client.get(RECORDS + more, HTTP_HX_REQUEST="true")

    assert "HX-Push-Url" not in response.headers  # loading more is no step in history
    pushed = query(response["HX-Replace-Url"])
    assert pushed["shown"] == ["10"] and pushed["limit"] == ["5"] and pushed["realm"] == ["default"]
    assert "cursor" not in pushed  # a reload starts from the top and re-renders the ten rows


def test_shown_re_renders_that_many_rows_then_loads_on_without_repeats(client_for, two_realms):
    client = client_for()
    params = {"realm": "default", "identity": "identity:luka", "limit": "5"}
    page = client.get(RECORDS, {**params, "shown": "15"}).content.decode()
    ids = re.findall(r'data-memory-id="([^"]+)"', page)
    seen = list(ids)
    while 'id="records-more"' in page:
        more = re.search(r'hx-get="([^"]+)"', page.split('id="records-more"', 1)[1]).group(1).replace("&amp;", "&")
        page = client.get(RECORDS + more, HTTP_HX_REQUEST="true").content.decode()
        seen += re.findall(r'data-memory-id="([^"]+)"', page)

    assert len(ids) == 15
    assert len(seen) == len(set(seen)) == LUKA_FACTS + 4


def test_history_restore_renders_the_controls_from_the_url(client_for, two_realms):
    page = client_for().get(
        RECORDS, {"scope": "identity", "status": "active"}, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    ).content.decode()

    assert '<option value="identity" selected>' in page and '<option value="active" selected>' in page
    assert 'autocomplete="off"' in page.split('class="filters"', 1)[1].split(">", 1)[0]
    assert "HX-Push-Url" not in client_for().get(
        RECORDS, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    ).headers


# ---------------------------------------------------------------------------------------------
# The reviewer's queue


def queue_ids(page: str) -> list[str]:
    return re.findall(r'<li class="queue-item list-item" data-memory-id="([^"]+)"', page)


def test_reviewer_queue_shows_first_lines_reason_and_wait(client_for, two_realms, posture):
    posture("standard")
    page = client_for(REVIEWER).get("/console/memory/quarantine/").content.decode()

    assert QUARANTINED_BODY in page.split('class="queue-item__preview"', 1)[1]
    assert "session tainted by MCP server" in page.split('class="queue-item__reason"', 1)[1]
    assert re.search(r"<time datetime=\"[^\"]+\" title=\"[^\"]+\">waiting \d+ (y|mo|d|h|min)</time>", page)


def test_queue_sorts_oldest_or_newest_first(client_for, demo_realms):
    client = client_for()
    newest = queue_ids(client.get("/console/memory/quarantine/").content.decode())
    oldest = queue_ids(client.get("/console/memory/quarantine/", {"order": "oldest"}).content.decode())

    assert len(newest) >= 2
    assert oldest == list(reversed(newest))


def test_unknown_queue_order_is_a_clear_error(client_for, demo_realms):
    response = client_for().get("/console/memory/quarantine/", {"order": "sideways"})

    assert response.status_code == 400
    assert "order must be one of newest, oldest, not &#x27;sideways&#x27;" in response.content.decode()


def test_reader_sees_no_grant_for_the_queue_never_an_empty_list(client_for, two_realms, posture):
    posture("standard")
    page = client_for(READER).get("/console/memory/quarantine/").content.decode()

    assert "No grant." in page
    assert "The queue is empty" not in page and QUARANTINED_BODY not in page


def test_queue_rpc_stays_body_free_for_reviewers(client_for, two_realms, posture):
    posture("standard")
    response = client_for(REVIEWER).post(
        "/console/rpc",
        {"jsonrpc": "2.0", "id": 1, "method": "mobkit/memory/panel/quarantine", "params": {}},
        content_type="application/json",
    )

    assert response.json()["result"]["records"]
    assert QUARANTINED_BODY not in response.content.decode()


@pytest.mark.parametrize(
    ("now_minus_ms", "text"),
    [(0, "waiting under a minute"), (59_000, "waiting under a minute"), (3 * 3_600_000, "waiting 3 h"),
     (2 * 86_400_000, "waiting 2 d"), (-5_000, "waiting under a minute")],
)
def test_waited_reads_as_a_duration(now_minus_ms, text):
    assert waited_ms(1_000_000_000_000 - now_minus_ms, now_ms=1_000_000_000_000) == text


# ---------------------------------------------------------------------------------------------
# Pages explain themselves


class Row:
    def __init__(self, scope_kind: str, scope_key: str) -> None:
        self.scope_kind, self.scope_key = scope_kind, scope_key


@pytest.mark.parametrize(
    ("kind", "key", "label"),
    [("identity", "identity:ana", "identity:ana"), ("mob", "ops", "mob ops"), ("operator", "oncall", "operator oncall"),
     ("realm", "", "realm"), ("mob", "mob:blue", "mob:blue")],
)
def test_scope_label_never_repeats_the_kind(kind, key, label):
    assert scope_label(Row(kind, key)) == label


def test_recall_for_an_identity_no_realm_holds_says_one_thing(client_for, two_realms):
    page = client_for().get("/console/memory/recall/", {"identity": "identity:nobody", "query_text": "x"}).content.decode()

    assert "No realm holds records for <code>identity:nobody</code>" in page
    assert "Nothing would be recalled" not in page


def test_an_error_on_holdings_does_not_offer_back_to_records(client_for, two_realms):
    response = client_for().get("/console/memory/", {"realm": "gone"})

    assert response.status_code == 400
    assert "Back to Records" not in response.content.decode()
    assert 'href="/console/memory/">Open this page without its parameters' in response.content.decode()


def test_a_missing_record_offers_the_way_back_to_records(client_for, two_realms):
    response = client_for().get(f"{RECORDS}mem-nope/")

    assert response.status_code == 404
    assert "Back to Records" in response.content.decode()
