"""The pure ABAC engine against MobKit's rules (docs/access.md §2.2–§2.3)."""

from __future__ import annotations

from typing import Any

import pytest

from access.engine import (
    ACCESS_ACTIONS,
    AccessConfig,
    AccessConfigError,
    Principal,
    Resource,
    action_matches,
    evaluate,
    may_perform_anywhere,
    normalize_for_memory_actions,
    parse_access_config,
)

ROOT = "root@example.test"
ALICE = "alice@example.test"  # member of group "ops"
BOB = "bob@example.test"  # in no group
ANONYMOUS = Principal(subject=None)


def config(*rules: dict[str, Any], enabled: bool = True) -> AccessConfig:
    return parse_access_config(
        {
            "enabled": enabled,
            "admins": [ROOT],
            "groups": {"ops": {"members": [ALICE], "description": "Operations"}},
            "rules": list(rules),
        }
    )


def principal(subject: str | None) -> Principal:
    return Principal(subject=subject, groups=frozenset({"ops"}) if subject == ALICE else frozenset())


def test_action_vocabulary_is_mobkits_24_in_display_order():
    assert len(ACCESS_ACTIONS) == 24
    assert ACCESS_ACTIONS[:11] == (
        "agent.view",
        "agent.send",
        "agent.memory.write",
        "agent.memory.delete",
        "agent.memory.read",
        "agent.memory.admin",
        "operator.memory.read",
        "mob.memory.read",
        "mob.memory.propose",
        "mob.memory.commit",
        "memory.quarantine.review",
    )
    assert ACCESS_ACTIONS[-1] == "access.admin"


@pytest.mark.parametrize(
    ("pattern", "action", "matches"),
    [
        ("agent.view", "agent.view", True),
        ("agent.view", "agent.send", False),
        ("*", "operator.memory.read", True),
        ("agent.*", "agent.memory.read", True),
        ("agent.*", "agent.view", True),
        ("agent.*", "mob.memory.read", False),
        ("agent.memory.*", "agent.memory.read", True),
        ("agent.memory.*", "agent.view", False),
        ("memory.*", "memory.quarantine.review", True),
        ("memory.*", "agent.memory.read", False),
        ("memory.*", "mob.memory.read", False),
        ("mob.*", "mob.observe", True),
    ],
)
def test_action_pattern_matching(pattern, action, matches):
    assert action_matches(pattern, action) is matches


def test_memory_wildcard_reaches_only_quarantine_review():
    assert [a for a in ACCESS_ACTIONS if action_matches("memory.*", a)] == ["memory.quarantine.review"]


@pytest.mark.parametrize("pattern", ["*", "agent.*", "agent.memory.*", "memory.*", "gating.decide"])
def test_known_patterns_validate(pattern):
    config({"id": "r", "actions": [pattern]})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"enabled": True, "rules": []},
            "access control cannot be enabled without at least one admin subject",
        ),
        (
            {"enabled": True, "admins": ["  "]},
            "access control cannot be enabled without at least one admin subject",
        ),
        (
            {"rules": [{"id": "r1", "actions": ["agent.view"]}, {"id": "r1", "actions": ["agent.send"]}]},
            "duplicate access rule id: r1",
        ),
        ({"rules": [{"id": "r1", "actions": ["agent.fly"]}]}, 'access rule r1: unknown action "agent.fly"'),
        ({"rules": [{"id": "r1", "actions": ["fleet.*"]}]}, 'access rule r1: unknown action "fleet.*"'),
        ({"rules": [{"id": "r1", "actions": ["agent.view.*"]}]}, 'access rule r1: unknown action "agent.view.*"'),
        ({"rules": [{"id": "r1", "actions": ["*.read"]}]}, 'access rule r1: unknown action "*.read"'),
        (
            {"rules": [{"id": "r1", "groups": ["ghosts"], "actions": ["agent.view"]}]},
            'access rule r1: unknown group "ghosts"',
        ),
        ({"rules": [{"id": "", "actions": ["agent.view"]}]}, "access rule id must not be empty"),
        ({"rules": [{"id": "  ", "actions": ["agent.view"]}]}, "access rule id must not be empty"),
        ({"rules": [{"id": "r1", "actions": []}]}, "access rule r1: actions must not be empty"),
        ({"rules": [{"id": "r1"}]}, "access rule r1: actions is required"),
        ({"rules": [{"actions": ["agent.view"]}]}, "access rule #1: id is required"),
        ({"rules": [{"id": 7, "actions": ["agent.view"]}]}, "access rule #1: id must be a string"),
        ({"rules": [{"id": "r1", "actions": "agent.view"}]}, "access rule r1: actions must be a list of strings"),
        (
            {"rules": [{"id": "r1", "actions": ["agent.view"], "agents": [1]}]},
            "access rule r1: agents must be a list of strings",
        ),
        (
            {"rules": [{"id": "r1", "actions": ["agent.view"], "effect": "maybe"}]},
            'access rule r1: effect must be "allow" or "deny", not "maybe"',
        ),
        (
            {"rules": [{"id": "r1", "actions": ["agent.view"], "match_labels": {"org": 1}}]},
            "access rule r1: match_labels must be a table of string values",
        ),
        ({"enabled": "yes"}, "access config: enabled must be true or false"),
        ({"admins": "root@example.test"}, "access config: admins must be a list of strings"),
        ({"groups": {"ops": {"members": "alice"}}}, "access group ops: members must be a list of strings"),
        ({"rules": {"id": "r1"}}, "access config: rules must be an array of [[rules]] tables"),
    ],
)
def test_invalid_configs_are_refused_with_a_message_naming_the_problem(data, message):
    with pytest.raises(AccessConfigError) as error:
        parse_access_config(data)
    assert str(error.value) == message


def test_config_defaults_follow_mobkit():
    parsed = parse_access_config({"rules": [{"id": "r", "actions": ["agent.view"]}]})
    assert parsed.enabled is False
    assert parsed.rules[0].effect == "allow"
    # A disabled config needs no admins: it is MobKit's default and allows everything.
    assert evaluate(parsed, ANONYMOUS, "access.admin", None).allowed


# (rules, subject, action, resource, allowed, reason)
EVALUATION_CASES = [
    pytest.param([], BOB, "agent.view", Resource(identity="scout"), False, "no rule allows agent.view", id="deny-by-default"),
    pytest.param([], ROOT, "access.admin", None, True, "admin", id="admin-bypasses-rules"),
    pytest.param(
        [{"id": "no", "effect": "deny", "actions": ["*"]}], ROOT, "agent.view", None, True, "admin",
        id="admin-bypasses-deny",
    ),
    pytest.param(
        [{"id": "all", "actions": ["agent.view"]}], None, "agent.view", Resource(identity="scout"), True,
        "allowed by rule all", id="unconstrained-subjects-match-anonymous",
    ),
    pytest.param(
        [{"id": "authed", "subjects": ["*"], "actions": ["agent.view"]}], None, "agent.view", None, False,
        "no rule allows agent.view", id="star-subject-excludes-anonymous",
    ),
    pytest.param(
        [{"id": "authed", "subjects": ["*"], "actions": ["agent.view"]}], BOB, "agent.view", None, True,
        "allowed by rule authed", id="star-subject-matches-any-authenticated",
    ),
    pytest.param(
        [{"id": "bob", "subjects": [BOB], "actions": ["agent.view"]}], ALICE, "agent.view", None, False,
        "no rule allows agent.view", id="listed-subject-only",
    ),
    pytest.param(
        [{"id": "ops", "groups": ["ops"], "actions": ["agent.view"]}], ALICE, "agent.view", None, True,
        "allowed by rule ops", id="group-member-matches",
    ),
    pytest.param(
        [{"id": "ops", "groups": ["ops"], "actions": ["agent.view"]}], BOB, "agent.view", None, False,
        "no rule allows agent.view", id="non-member-does-not-match",
    ),
    pytest.param(
        [{"id": "view", "actions": ["agent.view"]}, {"id": "hide", "effect": "deny", "actions": ["agent.*"], "agents": ["secret"]}],
        BOB, "agent.view", Resource(identity="secret"), False, "denied by rule hide", id="deny-overrides-allow",
    ),
    pytest.param(
        [{"id": "hide", "effect": "deny", "actions": ["agent.*"], "agents": ["secret"]}, {"id": "view", "actions": ["agent.view"]}],
        BOB, "agent.view", Resource(identity="secret"), False, "denied by rule hide", id="rule-order-irrelevant",
    ),
    pytest.param(
        [{"id": "view", "actions": ["agent.view"]}, {"id": "hide", "effect": "deny", "actions": ["agent.*"], "agents": ["secret"]}],
        BOB, "agent.view", Resource(identity="scout"), True, "allowed by rule view", id="deny-elsewhere-does-not-apply",
    ),
    pytest.param(
        [{"id": "scoped", "actions": ["gating.decide"], "agents": ["lead"]}], BOB, "gating.decide", None, False,
        "no rule allows gating.decide", id="scoped-rule-never-matches-resourceless",
    ),
    pytest.param(
        [{"id": "scoped", "actions": ["gating.decide"], "agents": ["*"]}], BOB, "gating.decide", None, False,
        "no rule allows gating.decide", id="star-agent-never-matches-resourceless",
    ),
    pytest.param(
        [{"id": "open", "actions": ["gating.decide"]}], BOB, "gating.decide", None, True,
        "allowed by rule open", id="unscoped-rule-matches-resourceless",
    ),
    pytest.param(
        [{"id": "any", "actions": ["agent.view"], "agents": ["*"]}], BOB, "agent.view", Resource(identity="x"), True,
        "allowed by rule any", id="star-agent-matches-present-identity",
    ),
    pytest.param(
        [{"id": "by-id", "actions": ["agent.view"], "agents": ["member-7"]}], BOB, "agent.view",
        Resource(identity="scout", agent_id="member-7"), True, "allowed by rule by-id", id="agents-match-agent-id",
    ),
    pytest.param(
        [{"id": "role", "actions": ["agent.view"], "roles": ["*"]}], BOB, "agent.view", Resource(identity="x"), False,
        "no rule allows agent.view", id="unknown-role-fails-closed",
    ),
    pytest.param(
        [{"id": "role", "actions": ["agent.view"], "roles": ["scout"]}], BOB, "agent.view",
        Resource(identity="x", role="scout"), True, "allowed by rule role", id="known-role-matches",
    ),
    pytest.param(
        [{"id": "pay", "actions": ["agent.view"], "match_labels": {"org": "payments"}}], BOB, "agent.view",
        Resource(identity="x"), False, "no rule allows agent.view", id="unknown-labels-fail-closed",
    ),
    pytest.param(
        [{"id": "pay", "actions": ["agent.view"], "match_labels": {"org": "payments"}}], BOB, "agent.view",
        Resource(identity="x", labels={"org": "payments", "tier": "1"}), True, "allowed by rule pay", id="labels-match",
    ),
    pytest.param(
        [{"id": "pay", "actions": ["agent.view"], "match_labels": {"org": "payments", "tier": "2"}}], BOB, "agent.view",
        Resource(identity="x", labels={"org": "payments", "tier": "1"}), False, "no rule allows agent.view",
        id="every-label-must-match",
    ),
    pytest.param(
        [{"id": "and", "actions": ["agent.view"], "agents": ["x"], "roles": ["scout"]}], BOB, "agent.view",
        Resource(identity="x", role="lead"), False, "no rule allows agent.view", id="selectors-and-together",
    ),
]


@pytest.mark.parametrize(("rules", "subject", "action", "resource", "allowed", "reason"), EVALUATION_CASES)
def test_evaluate(rules, subject, action, resource, allowed, reason):
    decision = evaluate(config(*rules), principal(subject), action, resource)
    assert (decision.allowed, decision.reason) == (allowed, reason)


def test_disabled_config_allows_everything_even_with_denies():
    disabled = config({"id": "no", "effect": "deny", "actions": ["*"]}, enabled=False)
    assert evaluate(disabled, ANONYMOUS, "access.admin", None).allowed


@pytest.mark.parametrize(
    ("rules", "subject", "action", "expected"),
    [
        ([], ROOT, "access.admin", True),
        ([], BOB, "agent.memory.read", False),
        ([{"id": "scoped", "actions": ["agent.memory.read"], "agents": ["scout"]}], BOB, "agent.memory.read", True),
        ([{"id": "wild", "groups": ["ops"], "actions": ["agent.*"]}], ALICE, "agent.memory.read", True),
        ([{"id": "wild", "groups": ["ops"], "actions": ["agent.*"]}], BOB, "agent.memory.read", False),
        ([{"id": "deny", "effect": "deny", "actions": ["agent.memory.read"]}], BOB, "agent.memory.read", False),
        (
            [{"id": "read", "actions": ["agent.memory.read"]}, {"id": "deny", "effect": "deny", "actions": ["agent.memory.read"]}],
            BOB, "agent.memory.read", True,
        ),
    ],
)
def test_may_perform_anywhere_ignores_selectors_and_denies(rules, subject, action, expected):
    assert may_perform_anywhere(config(*rules), principal(subject), action) is expected


def _actions(normalized: AccessConfig) -> dict[str, tuple[str, ...]]:
    return {rule.id: rule.actions for rule in normalized.rules}


def test_compat_rewrite_lets_memory_read_ride_agent_view_for_allow_and_deny():
    naive = config(
        {"id": "view", "actions": ["agent.view", "mob.observe"]},
        {"id": "wild", "actions": ["agent.*"]},
        {"id": "hide", "effect": "deny", "actions": ["agent.view"], "agents": ["secret"]},
        {"id": "gate", "actions": ["gating.view"]},
    )
    normalized, changed = normalize_for_memory_actions(naive)
    assert changed
    assert _actions(normalized) == {
        "view": ("agent.view", "mob.observe", "agent.memory.read"),
        "wild": ("agent.*",),  # already reaches agent.memory.read
        "hide": ("agent.view", "agent.memory.read"),
        "gate": ("gating.view",),
    }
    assert evaluate(normalized, principal(BOB), "agent.memory.read", Resource(identity="scout")).allowed
    assert not evaluate(normalized, principal(BOB), "agent.memory.read", Resource(identity="secret")).allowed
    # Never granted by the rewrite (§2.2).
    assert not evaluate(normalized, principal(BOB), "operator.memory.read", None).allowed


def test_broad_wildcards_do_not_count_as_mentioning_memory():
    normalized, changed = normalize_for_memory_actions(
        config({"id": "all", "actions": ["*"]}, {"id": "view", "subjects": [BOB], "actions": ["agent.view"]})
    )
    assert changed
    assert _actions(normalized)["view"] == ("agent.view", "agent.memory.read")


@pytest.mark.parametrize(
    "memory_pattern",
    ["memory.quarantine.review", "memory.*", "agent.memory.write", "agent.memory.*", "operator.memory.read"],
)
def test_config_mentioning_memory_is_taken_literally(memory_pattern):
    literal = config(
        {"id": "view", "actions": ["agent.view"]},
        {"id": "review", "subjects": [ALICE], "actions": [memory_pattern]},
    )
    normalized, changed = normalize_for_memory_actions(literal)
    assert (normalized, changed) == (literal, False)
    assert not evaluate(normalized, principal(BOB), "agent.memory.read", Resource(identity="scout")).allowed
