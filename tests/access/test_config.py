"""Loading access.toml: start-up refusal, live reload, last-good-config on bad edits."""

from __future__ import annotations

import logging
import time

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from mobkit_console.access.caller import access_for_subject
from mobkit_console.access.config import current_access_config, refresh_access_config
from tests.support.postures import READER, ROOT, everyone_may

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
    access_toml(text)
    with pytest.raises(ImproperlyConfigured) as error:
        start_server()
    assert str(error.value) == message


def test_start_up_with_unparseable_toml_names_the_problem(access_toml):
    access_toml("enabled = tru\n")
    with pytest.raises(ImproperlyConfigured, match="access config could not be parsed"):
        start_server()


def test_start_up_with_a_missing_file_stops(settings, tmp_path):
    settings.MOBKIT_ACCESS_CONFIG = tmp_path / "absent.toml"
    with pytest.raises(ImproperlyConfigured, match="access config file not found"):
        start_server()


def test_start_up_without_a_setting_disables_access_control(settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    start_server()
    assert current_access_config().available is False


def test_a_memory_naive_file_is_normalized_in_memory_and_left_untouched(access_toml, caplog):
    path = access_toml(everyone_may("agent.view", "mob.observe"))
    before = path.read_bytes()
    with caplog.at_level(logging.WARNING, logger="mobkit_console.access"):
        start_server()
    assert access_for_subject(READER).allows("agent.memory.read", "identity:scout")
    assert path.read_bytes() == before
    assert "predates the memory read actions" in caplog.text


def test_a_valid_edit_applies_on_the_next_check(access_toml):
    access_toml(WITH_OPERATOR)
    first = current_access_config()
    assert access_for_subject(READER).allows("operator.memory.read")
    access_toml(WITHOUT_OPERATOR)
    second = refresh_access_config()
    assert second.revision != first.revision
    assert not access_for_subject(READER).allows("operator.memory.read")


def test_a_real_edit_is_picked_up_within_five_seconds(access_toml):
    path = access_toml(WITH_OPERATOR)
    assert access_for_subject(READER).allows("operator.memory.read")
    # A plain rewrite, as an operator's editor would do it (no forced check, no mtime games).
    path.write_text(WITHOUT_OPERATOR, encoding="utf-8")
    deadline = time.monotonic() + 5
    while access_for_subject(READER).allows("operator.memory.read"):
        assert time.monotonic() < deadline, "edit not applied within 5 s"
        time.sleep(0.05)


def test_an_atomic_replace_is_picked_up(access_toml, tmp_path):
    path = access_toml(WITH_OPERATOR)
    current_access_config()
    replacement = tmp_path / "access.toml.tmp"
    replacement.write_text(WITHOUT_OPERATOR.replace("everyone", "renamed"), encoding="utf-8")
    replacement.replace(path)
    refresh_access_config()
    assert not access_for_subject(READER).allows("operator.memory.read")


def test_an_invalid_edit_keeps_the_last_good_config_and_is_logged(access_toml, caplog):
    access_toml(WITH_OPERATOR)
    good = current_access_config()
    access_toml(everyone_may("agent.view", "agent.fly"))
    with caplog.at_level(logging.ERROR, logger="mobkit_console.access"):
        assert refresh_access_config() == good
        refresh_access_config()  # the same bad file is reported once, not on every check
    assert access_for_subject(READER).allows("operator.memory.read")
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert 'access rule everyone: unknown action "agent.fly"' in errors[0].getMessage()
    # Fixing the file applies again.
    access_toml(WITHOUT_OPERATOR)
    refresh_access_config()
    assert not access_for_subject(READER).allows("operator.memory.read")


def test_a_missing_file_while_running_keeps_the_last_good_config(access_toml, caplog):
    path = access_toml(WITH_OPERATOR)
    good = current_access_config()
    path.unlink()
    with caplog.at_level(logging.ERROR, logger="mobkit_console.access"):
        assert refresh_access_config() == good
    assert "missing" in caplog.text
    assert access_for_subject(READER).allows("operator.memory.read")


def test_one_access_sees_one_config(access_toml):
    access_toml(WITH_OPERATOR)
    during_request = access_for_subject(READER)
    access_toml(WITHOUT_OPERATOR)
    refresh_access_config()
    assert during_request.allows("operator.memory.read")
    assert not access_for_subject(READER).allows("operator.memory.read")
