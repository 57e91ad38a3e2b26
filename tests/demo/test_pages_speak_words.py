"""Every page of a running demo speaks words: no Rust Debug author, no Python literal, no snake-case
enum in its text (docs/daily-use.md §8); the raw event under a timeline row is the one exception."""

from __future__ import annotations

import html
import re
import threading

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from memory_panel.simulator.demo.activity import run_activity
from mobkit_console.timeline.watcher import RealmWatcher

pytestmark = pytest.mark.django_db

PAGES = ["/console/memory/", "/console/memory/records/", "/console/memory/quarantine/", "/console/memory/dreams/",
         "/console/memory/ledger/", "/console/memory/knowledge/?identity=identity:luka", "/console/memory/pipeline/",
         "/console/timeline/", "/console/memory/recall/?identity=identity:luka&query_text=hotel"]
# A snake-case word in quotes is a name the record text quotes ('web_fetch'), not an enum.
DEBUG_LITERAL = re.compile(r"Agent \{|Steward \{|Operator \{|\bTrue\b|\bFalse\b|\bNone\b|(?<!')\b[a-z]+_[a-z]+(?:_[a-z]+)*\b(?!')")


def _text(page: str) -> str:
    main = page.split('<main id="main"', 1)[1]
    main = re.sub(r'<details class="timeline-event__raw">.*?</details>', "", main, flags=re.S)
    main = re.sub(r"<(code|pre)[^>]*>.*?</\1>", "", main, flags=re.S)  # method names and record text
    return html.unescape(re.sub(r"<[^>]+>", " ", main))


def test_no_page_of_a_running_demo_shows_a_debug_literal(agent_memory_dir, client):
    call_command("seed_demo")
    watcher = RealmWatcher(broadcast=lambda rows: None)
    watcher.poll_once()  # the follower's first look: it resumes after the seeded history
    run_activity(root=agent_memory_dir, realms=["default"], interval=0, rounds=2, stop=threading.Event(),
                 report=lambda line: None, seed=8)
    assert watcher.poll_once()  # the activity's writes reach the timeline too
    watcher.close()
    client.force_login(get_user_model().objects.create_user("newcomer"))

    for url in PAGES:
        response = client.get(url)
        assert response.status_code == 200, url
        found = DEBUG_LITERAL.findall(_text(response.content.decode()))
        assert not found, (url, found[:5])
