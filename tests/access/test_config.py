"""Loading access.toml: start-up refusal, live reload, last-good-config on bad edits."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from access.caller import Caller, access_for
from access.config import current_access_config, refresh_access_config
from tests.support.postures import READER, ROOT, SCOUT_READ_LEAD_DENIED, everyone_may

REPO = Path(__file__).resolve().parents[2]
WITH_OPERATOR = everyone_may("agent.view", "agent.memory.read", "operator.memory.read")
WITHOUT_OPERATOR = everyone_may("agent.view", "agent.memory.read")


def start_server() -> None:
    apps.get_app_config("access").ready()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("enabled = true\n", "access control cannot be enabled without at least one admin subject"),
        (
            f'admins = ["{ROOT}"]\n[[rules]]\nid = "r1"\nactions = ["agent.fly"]\n',
            'access rule r1: unknown action "agent.fly"',
        ),
        (
            f'admins = ["{ROOT}"]\n[[rules]]\nid = "r1"\ngroups = ["ops"]\nactions = ["agent.view"]\n',
            'access rule r1: unknown group "ops"',
        ),
    ],
)
def test_start_up_with_an_invalid_file_stops_with_mobkits_message(access_toml, text, message):
    path = access_toml(text)
    with pytest.raises(ImproperlyConfigured) as error:
        start_server()
    assert str(error.value) == f"MOBKIT_ACCESS_CONFIG={path}: {message}"


def test_start_up_with_unparseable_toml_names_the_problem(access_toml):
    access_toml("enabled = tru\n")
    with pytest.raises(ImproperlyConfigured, match="access config could not be parsed"):
        start_server()


def test_start_up_with_a_missing_file_stops(settings, tmp_path):
    settings.MOBKIT_ACCESS_CONFIG = tmp_path / "absent.toml"
    with pytest.raises(ImproperlyConfigured) as error:
        start_server()
    assert str(error.value) == f"MOBKIT_ACCESS_CONFIG={tmp_path / 'absent.toml'}: access config file not found"


# docs/access.md §2.3: MobKit's default for a missing `enabled` is false, so these files would read as
# "access control off". A file that exists must say so itself.
SAYS_NOTHING = "the file does not say enabled = true or enabled = false"
FILES_THAT_SAY_NOTHING = [
    pytest.param("", id="empty"),
    pytest.param(" \n\t\n", id="whitespace"),
    pytest.param("# access control\n", id="comment-only"),
    pytest.param(f'admins = ["{ROOT}"]\n', id="partial"),
]


@pytest.mark.parametrize("text", FILES_THAT_SAY_NOTHING)
def test_start_up_with_a_file_that_does_not_say_enabled_refuses_naming_path_and_reason(access_toml, text):
    path = access_toml(text)
    with pytest.raises(ImproperlyConfigured) as error:
        start_server()
    assert str(error.value).startswith(f"MOBKIT_ACCESS_CONFIG={path}: ")
    assert SAYS_NOTHING in str(error.value)


def test_a_server_process_started_with_an_empty_file_exits_with_the_reason(tmp_path):
    empty = tmp_path / "access.toml"
    empty.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBKIT_")}
    env.update(MOBKIT_ACCESS_CONFIG=str(empty), MOBKIT_PERSISTENT_STATE=str(tmp_path / "state"),
               DATABASE_URL=f"sqlite:///{tmp_path / 'console.sqlite3'}")
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert f"ImproperlyConfigured: MOBKIT_ACCESS_CONFIG={empty}: access config: {SAYS_NOTHING}" in result.stderr


def test_an_explicit_enabled_false_file_turns_access_control_off(access_toml):
    access_toml("enabled = false\n")
    start_server()
    loaded = current_access_config()
    assert loaded.available and not loaded.config.enabled
    assert access_for(Caller(subject=READER)).allows("operator.memory.read")


@pytest.mark.parametrize("text", FILES_THAT_SAY_NOTHING)
def test_emptying_the_file_while_running_keeps_access_control_on_and_is_logged(access_toml, caplog, text):
    access_toml(WITHOUT_OPERATOR)
    good = current_access_config()
    access_toml(text)
    with caplog.at_level(logging.ERROR, logger="access"):
        assert refresh_access_config() == good
    assert not access_for(Caller(subject=READER)).allows("operator.memory.read")
    assert SAYS_NOTHING in caplog.text


def test_start_up_without_a_setting_disables_access_control(settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    start_server()
    assert current_access_config().available is False


def test_a_memory_naive_file_is_normalized_in_memory_and_left_untouched(access_toml, caplog):
    path = access_toml(everyone_may("agent.view", "mob.observe"))
    before = path.read_bytes()
    with caplog.at_level(logging.WARNING, logger="access"):
        start_server()
    assert access_for(Caller(subject=READER)).allows("agent.memory.read", "identity:scout")
    assert path.read_bytes() == before
    assert "predates the memory read actions" in caplog.text


def test_a_valid_edit_applies_on_the_next_check(access_toml):
    access_toml(WITH_OPERATOR)
    first = current_access_config()
    assert access_for(Caller(subject=READER)).allows("operator.memory.read")
    access_toml(WITHOUT_OPERATOR)
    second = refresh_access_config()
    assert second.revision != first.revision
    assert not access_for(Caller(subject=READER)).allows("operator.memory.read")


def test_a_real_edit_is_picked_up_within_five_seconds(access_toml):
    path = access_toml(WITH_OPERATOR)
    assert access_for(Caller(subject=READER)).allows("operator.memory.read")
    # A plain rewrite, as an operator's editor would do it (no forced check, no mtime games).
    path.write_text(WITHOUT_OPERATOR, encoding="utf-8")
    deadline = time.monotonic() + 5
    while access_for(Caller(subject=READER)).allows("operator.memory.read"):
        assert time.monotonic() < deadline, "edit not applied within 5 s"
        time.sleep(0.05)


def test_an_atomic_replace_is_picked_up(access_toml, tmp_path):
    path = access_toml(WITH_OPERATOR)
    current_access_config()
    replacement = tmp_path / "access.toml.tmp"
    replacement.write_text(WITHOUT_OPERATOR.replace("everyone", "renamed"), encoding="utf-8")
    replacement.replace(path)
    refresh_access_config()
    assert not access_for(Caller(subject=READER)).allows("operator.memory.read")


def test_an_invalid_edit_keeps_the_last_good_config_and_is_logged(access_toml, caplog):
    access_toml(WITH_OPERATOR)
    good = current_access_config()
    access_toml(everyone_may("agent.view", "agent.fly"))
    with caplog.at_level(logging.ERROR, logger="access"):
        assert refresh_access_config() == good
        refresh_access_config()  # the same bad file is reported once, not on every check
    assert access_for(Caller(subject=READER)).allows("operator.memory.read")
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert 'access rule everyone: unknown action "agent.fly"' in errors[0].getMessage()
    # Fixing the file applies again.
    access_toml(WITHOUT_OPERATOR)
    refresh_access_config()
    assert not access_for(Caller(subject=READER)).allows("operator.memory.read")


def test_a_missing_file_while_running_keeps_the_last_good_config(access_toml, caplog):
    path = access_toml(WITH_OPERATOR)
    good = current_access_config()
    path.unlink()
    with caplog.at_level(logging.ERROR, logger="access"):
        assert refresh_access_config() == good
    assert "missing" in caplog.text
    assert access_for(Caller(subject=READER)).allows("operator.memory.read")


def test_one_access_sees_one_config(access_toml):
    access_toml(WITH_OPERATOR)
    during_request = access_for(Caller(subject=READER))
    access_toml(WITHOUT_OPERATOR)
    refresh_access_config()
    assert during_request.allows("operator.memory.read")
    assert not access_for(Caller(subject=READER)).allows("operator.memory.read")


@pytest.mark.django_db
def test_an_emptied_file_still_denies_over_rpc(access_toml, agent_memory_dir, client, django_user_model):
    access_toml(WITHOUT_OPERATOR)
    current_access_config()
    client.force_login(django_user_model.objects.create_user(READER, email=READER))
    request = {"jsonrpc": "2.0", "id": 1, "method": "mobkit/memory/panel/records", "params": {"scope": "operator"}}
    access_toml("")
    refresh_access_config()
    reply = client.post("/console/rpc", request, content_type="application/json").json()
    assert reply["error"]["data"] == {"kind": "access_denied", "action": "operator.memory.read", "resource": None}



def test_a_file_caught_half_written_never_widens_grants(access_toml, monkeypatch):
    """A save that truncates and writes in steps: the prefix cut before `agents` parses, unscoped."""
    monkeypatch.setattr("access.settled_file.RECHECK_INTERVAL_S", 0)  # every call is a check of the file
    path = access_toml(SCOUT_READ_LEAD_DENIED)
    assert current_access_config().config.rules[1].agents == ("identity:scout",)
    edited = SCOUT_READ_LEAD_DENIED.replace('id = "never-lead"', 'id = "never-lead-or-luka"').replace(
        'agents = ["identity:lead"]', 'agents = ["identity:lead", "identity:luka"]'
    )
    cut = edited.index('agents = ["identity:scout"]')
    with path.open("r+", encoding="utf-8") as handle:
        handle.truncate(0)
        handle.write(edited[:cut])  # a prefix that parses: scout-only is unscoped, never-lead gone
        handle.flush()
        for _ in range(3):
            assert not access_for(Caller(subject=READER)).allows("agent.memory.read", "identity:lead")
        handle.write(edited[cut:])
    assert not access_for(Caller(subject=READER)).allows("agent.memory.read", "identity:lead")
    time.sleep(0.6)  # STABLE_FOR_S: the whole file, read twice apart, now applies
    assert [rule.id for rule in current_access_config().config.rules][-1] == "never-lead-or-luka"
    assert not access_for(Caller(subject=READER)).allows("agent.memory.read", "identity:luka")
    assert access_for(Caller(subject=READER)).allows("agent.memory.read", "identity:scout")


def test_a_reload_logs_the_rule_ids_it_added_removed_and_changed(access_toml, caplog):
    access_toml(SCOUT_READ_LEAD_DENIED)
    current_access_config()
    edited = SCOUT_READ_LEAD_DENIED.replace('id = "never-lead"', 'id = "never-luka"').replace(
        'actions = ["agent.view"]', 'actions = ["agent.view", "mob.observe"]'
    )
    access_toml(edited)
    with caplog.at_level(logging.INFO, logger="access"):
        refresh_access_config()
    assert "rules added: never-luka; rules removed: never-lead; rules changed: view-all" in caplog.text


def test_rule_changes_names_added_removed_and_changed_ids():
    from access.config import RuleChanges, rule_changes
    from access.engine import AccessConfig, Rule

    before = AccessConfig(rules=(Rule("a", actions=("agent.view",)), Rule("b", actions=("agent.view",))))
    after = AccessConfig(rules=(Rule("b", actions=("agent.view",), agents=("x",)), Rule("c", actions=("agent.view",))))
    assert rule_changes(before, after) == RuleChanges(added=("c",), removed=("a",), changed=("b",))
    assert not rule_changes(after, after)
