"""MobKit's illustrative postures (docs/access.md §2.6) as real access.toml files, checked through `Access`."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, User

from access.caller import Caller, access_for, access_status, caller_for_user, subject_for_user
from tests.support.postures import HEADER, LEAD, POSTURES, READER, REVIEWER, ROLE_AND_LABEL_SCOPED, ROOT, SCOUT

# (action, identity) pairs the memory panel asks (docs/access.md §2.4); None is a resource-less check.
CHECKS = [
    ("agent.view", SCOUT),
    ("agent.memory.read", SCOUT),
    ("agent.memory.read", LEAD),
    ("agent.memory.read", None),
    ("mob.memory.read", None),
    ("operator.memory.read", None),
    ("memory.quarantine.review", None),
    ("mob.observe", None),
]

# posture -> subject -> expected allows() for each of CHECKS, in order.
EXPECTED = {
    "reader": {READER: [1, 1, 1, 1, 1, 1, 0, 1], None: [1, 1, 1, 1, 1, 1, 0, 1]},
    "partial": {READER: [1, 1, 1, 1, 1, 0, 0, 1]},
    "scoped": {READER: [1, 1, 0, 0, 0, 0, 0, 0], None: [0, 0, 0, 0, 0, 0, 0, 0]},
    "none": {READER: [1, 0, 0, 0, 0, 0, 0, 1], REVIEWER: [1, 0, 0, 0, 0, 0, 0, 1]},
    "reviewer": {READER: [1, 1, 1, 1, 1, 1, 0, 1], REVIEWER: [1, 1, 1, 1, 1, 1, 1, 1]},
}


@pytest.mark.parametrize(
    ("posture", "subject"),
    [(posture, subject) for posture, by_subject in EXPECTED.items() for subject in by_subject],
)
def test_posture_grants(access_toml, posture, subject):
    access_toml(POSTURES[posture])
    access = access_for(Caller(subject=subject))
    assert access.enforced
    got = [int(access.allows(action, identity)) for action, identity in CHECKS]
    assert got == EXPECTED[posture][subject], list(zip(CHECKS, got))


def test_open_posture_without_a_config_allows_everything(settings):
    settings.MOBKIT_ACCESS_CONFIG = None
    access = access_for(Caller(subject=None))
    assert not access.enforced
    assert all(access.allows(action, identity) for action, identity in CHECKS)
    assert access_status(access) | {"actions": None} == {
        "available": False,
        "enabled": False,
        "revision": "0",
        "subject": None,
        "groups": [],
        "is_admin": False,
        "can_administer": False,
        "actions": None,
    }


def test_disabled_config_file_allows_everything(access_toml):
    access_toml(POSTURES["none"].replace("enabled = true", "enabled = false"))
    access = access_for(Caller(subject=READER))
    assert not access.enforced
    assert access.allows("memory.quarantine.review") and access.may_perform_anywhere("operator.memory.read")


@pytest.mark.parametrize("posture", sorted(POSTURES))
def test_admin_is_allowed_everything_in_every_posture(access_toml, posture):
    access_toml(POSTURES[posture])
    access = access_for(Caller(subject=ROOT))
    assert access.is_admin
    assert all(access.allows(action, identity) for action, identity in CHECKS)
    assert access.allows("access.admin")


@pytest.mark.parametrize(
    ("posture", "can_read", "can_review"),
    [("reader", True, False), ("scoped", True, False), ("none", False, False), ("reviewer", True, False)],
)
def test_may_perform_anywhere_matches_the_experience_table(access_toml, posture, can_read, can_review):
    # docs/ui.md §5: a rule scoped to one agent still shows the Memory nav; an explicit deny hides it.
    access_toml(POSTURES[posture])
    access = access_for(Caller(subject=READER))
    reads = ("agent.memory.read", "mob.memory.read", "operator.memory.read")
    assert any(access.may_perform_anywhere(action) for action in reads) is can_read
    assert access.may_perform_anywhere("memory.quarantine.review") is can_review


def test_role_and_label_scoped_rules_never_match_without_a_roster(access_toml):
    access_toml(ROLE_AND_LABEL_SCOPED)
    access = access_for(Caller(subject=READER))
    assert not access.allows("agent.view", SCOUT)
    assert not access.allows("agent.memory.read", SCOUT)


def test_subject_is_email_else_username():
    assert subject_for_user(User(username="bob", email="bob@example.test")) == "bob@example.test"
    assert subject_for_user(User(username="bob", email="")) == "bob"
    assert subject_for_user(AnonymousUser()) is None
    assert subject_for_user(None) is None


def test_a_users_caller_resolves_groups_from_the_email(access_toml):
    access_toml(POSTURES["reviewer"])
    access = access_for(caller_for_user(User(username="rev", email=REVIEWER), sign_in="session"))
    assert (access.subject, access.groups) == (REVIEWER, frozenset({"reviewers"}))
    assert access.allows("memory.quarantine.review")
    other = User(username=REVIEWER, email="other@example.test")
    assert not access_for(caller_for_user(other, sign_in="session")).allows(
        "memory.quarantine.review"
    )


@pytest.mark.parametrize(
    ("text", "subject", "can_administer"),
    [
        # Bootstrap: disabled with no admins named, anyone may administer.
        ("enabled = false\n", None, True),
        ("enabled = false\n", READER, True),
        # Once admins exist, only admins and access.admin grantees, enabled or not.
        (f'enabled = false\nadmins = ["{ROOT}"]\n', READER, False),
        (f'enabled = false\nadmins = ["{ROOT}"]\n', ROOT, True),
        (HEADER, READER, False),
        (HEADER, ROOT, True),
        (HEADER + '[[rules]]\nid = "admins"\ngroups = ["reviewers"]\nactions = ["access.admin"]\n', REVIEWER, True),
    ],
)
def test_access_status_can_administer(access_toml, text, subject, can_administer):
    access_toml(text)
    status = access_status(access_for(Caller(subject=subject)))
    assert status["available"] is True
    assert status["subject"] == subject
    assert status["can_administer"] is can_administer
    assert len(status["actions"]) == 24 and len(status["revision"]) == 16


def test_access_status_reports_groups_and_admin(access_toml):
    access_toml(POSTURES["reviewer"])
    status = access_status(access_for(Caller(subject=REVIEWER)))
    assert (status["enabled"], status["groups"], status["is_admin"]) == (True, ["reviewers"], False)
    assert access_status(access_for(Caller(subject=ROOT)))["is_admin"] is True
