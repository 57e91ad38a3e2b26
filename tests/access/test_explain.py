"""access/engine.py ``explain``: every rule's part in one check, deny overriding allow, and
``evaluate`` being that same decision (docs/access.md §2.3, §2.9)."""

from __future__ import annotations

import pytest

from access.engine import AccessConfig, Group, Principal, Resource, Rule, evaluate, explain

SCOUT = Resource(identity="identity:scout", agent_id="identity:scout")
LEAD = Resource(identity="identity:lead", agent_id="identity:lead")
CONFIG = AccessConfig(
    enabled=True,
    admins=("root@x",),
    groups={"ops": Group(members=("ann@x",))},
    rules=(
        Rule(id="all-view", actions=("agent.view",)),
        Rule(id="signed-in-read", subjects=("*",), actions=("agent.memory.read",)),
        Rule(id="ops-scout", groups=("ops",), actions=("agent.*",), agents=("identity:scout",)),
        Rule(id="no-lead", effect="deny", subjects=("bob@x",), actions=("agent.memory.read",), agents=("identity:lead",)),
        Rule(id="no-lead-ops", effect="deny", groups=("ops",), actions=("*",), agents=("identity:lead",)),
        Rule(id="payments", actions=("agent.view",), match_labels={"org": "pay"}),
    ),
)

# (subject, groups, action, resource, allowed, basis, decisive, matched)
CASES = [
    ("bob@x", (), "agent.view", SCOUT, True, "allow", ["all-view"], ["all-view"]),
    ("bob@x", (), "agent.memory.read", SCOUT, True, "allow", ["signed-in-read"], ["signed-in-read"]),
    ("bob@x", (), "agent.memory.read", LEAD, False, "deny", ["no-lead"], ["signed-in-read", "no-lead"]),
    (None, (), "agent.memory.read", SCOUT, False, "no_rule", [], []),  # "*" leaves anonymous out
    ("ann@x", ("ops",), "agent.send", SCOUT, True, "allow", ["ops-scout"], ["ops-scout"]),
    ("ann@x", ("ops",), "agent.send", None, False, "no_rule", [], []),  # scoped rules skip resource-less checks
    ("ann@x", ("ops",), "agent.memory.read", LEAD, False, "deny", ["no-lead-ops"], ["signed-in-read", "no-lead-ops"]),
    ("root@x", (), "agent.memory.read", LEAD, True, "admin", [], ["signed-in-read"]),
]


@pytest.mark.parametrize(("subject", "groups", "action", "resource", "allowed", "basis", "decisive", "matched"), CASES)
def test_explain(subject, groups, action, resource, allowed, basis, decisive, matched):
    principal = Principal(subject, frozenset(groups))
    got = explain(CONFIG, principal, action, resource)
    assert (got.allowed, got.basis, list(got.decisive), list(got.matched)) == (allowed, basis, decisive, matched)
    assert evaluate(CONFIG, principal, action, resource) == got.decision
    assert [v.rule.id for v in got.verdicts] == [rule.id for rule in CONFIG.rules]
    assert all(bool(v.why_not) is (not v.matched) for v in got.verdicts)


# (rule id, why it did not count for bob reading scout's memory... or a resource-less check)
WHY_NOT = [
    ("all-view", SCOUT, "its actions do not name this action"),
    ("ops-scout", SCOUT, "its subjects and groups do not include this subject"),
    ("no-lead", SCOUT, "its agents, roles or labels do not select this agent (roles and labels are unknown here)"),
    ("no-lead", None, "it is scoped to agents, roles or labels, and this check names no agent"),
]


@pytest.mark.parametrize(("rule_id", "resource", "why"), WHY_NOT)
def test_why_a_rule_did_not_count(rule_id, resource, why):
    got = explain(CONFIG, Principal("bob@x"), "agent.memory.read", resource)
    assert {v.rule.id: v.why_not for v in got.verdicts}[rule_id] == why


def test_a_disabled_config_allows_with_no_rule_asked():
    got = explain(AccessConfig(enabled=False, rules=CONFIG.rules), Principal(None), "access.admin", None)
    assert (got.allowed, got.basis, got.verdicts, got.reason) == (True, "disabled", (), "access control is disabled")
