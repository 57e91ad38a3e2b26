"""MobKit's attribute-based access control, as pure functions (docs/access.md §2).

Config in, decision out: no Django, no I/O, no clock. `config.py` loads the operator's
`access.toml` into these types and `caller.py` turns a signed-in user into checks against them.

Spawn lineage (§2.3: a check on an agent also matches rules on its `spawned_by` ancestors) is not
modelled: the console has no runtime spawn registry, the only trusted source of `spawned_by`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

# §2.2, in MobKit's display order.
ACCESS_ACTIONS: tuple[str, ...] = (
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
    "agent.spawn",
    "agent.respawn",
    "agent.retire",
    "agent.reset",
    "gating.view",
    "gating.decide",
    "workgraph.view",
    "workgraph.manage",
    "mob.observe",
    "runtime.admin",
    "mobpack.author",
    "mobpack.deploy",
    "access.admin",
)

Effect = Literal["allow", "deny"]


class AccessConfigError(ValueError):
    """An access config MobKit would refuse; `str()` is the message MobKit gives (§2.3)."""


@dataclass(frozen=True)
class Group:
    members: tuple[str, ...] = ()
    description: str | None = None


@dataclass(frozen=True)
class Rule:
    id: str
    description: str | None = None
    effect: Effect = "allow"
    subjects: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    match_labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_scoped(self) -> bool:
        """True when the rule constrains the resource; unscoped rules also match resource-less checks."""
        return bool(self.agents or self.roles or self.match_labels)


@dataclass(frozen=True)
class AccessConfig:
    # MobKit's defaults: a config that says nothing is disabled and allows everything.
    enabled: bool = False
    admins: tuple[str, ...] = ()
    groups: Mapping[str, Group] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()


@dataclass(frozen=True)
class Principal:
    subject: str | None
    groups: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Resource:
    """What a check targets. `role`/`labels` None mean unknown, which fails those selectors closed."""

    identity: str | None = None
    agent_id: str | None = None
    role: str | None = None
    labels: Mapping[str, str] | None = None

    @property
    def is_present(self) -> bool:
        return self.identity is not None or self.agent_id is not None


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str


# --- action patterns ------------------------------------------------------------------------


def action_matches(pattern: str, action: str) -> bool:
    """Exact name, `*`, or `prefix.*` (anything strictly below `prefix.`)."""
    if pattern == "*" or pattern == action:
        return True
    if pattern.endswith(".*"):
        return action.startswith(pattern[:-1])
    return False


def action_pattern_is_known(pattern: str) -> bool:
    """A pattern is valid when it names a known action or a prefix that at least one action has."""
    if pattern == "*":
        return True
    if pattern.endswith(".*"):
        return any(action_matches(pattern, action) for action in ACCESS_ACTIONS)
    return pattern in ACCESS_ACTIONS


def _pattern_mentions_memory(pattern: str) -> bool:
    stem = pattern[:-2] if pattern.endswith(".*") else pattern
    return "memory" in stem.split(".")


# --- parsing and validation -----------------------------------------------------------------


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _string_list(value: Any, *, where: str, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise AccessConfigError(f"{where}: {name} must be a list of strings")
    return tuple(value)


def _optional_string(value: Any, *, where: str, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise AccessConfigError(f"{where}: {name} must be a string")


def _parse_group(name: str, data: Any) -> Group:
    where = f"access group {name}"
    if not isinstance(data, Mapping):
        raise AccessConfigError(f"{where}: must be a table with members and an optional description")
    return Group(
        members=_string_list(data.get("members"), where=where, name="members"),
        description=_optional_string(data.get("description"), where=where, name="description"),
    )


def _parse_rule(position: int, data: Any) -> Rule:
    if not isinstance(data, Mapping):
        raise AccessConfigError(f"access rule #{position}: must be a table")
    rule_id = data.get("id")
    if rule_id is None:
        raise AccessConfigError(f"access rule #{position}: id is required")
    if not isinstance(rule_id, str):
        raise AccessConfigError(f"access rule #{position}: id must be a string")
    where = f"access rule {rule_id}"
    effect = data.get("effect", "allow")
    if effect not in ("allow", "deny"):
        shown = _quoted(effect) if isinstance(effect, str) else repr(effect)
        raise AccessConfigError(f'{where}: effect must be "allow" or "deny", not {shown}')
    if "actions" not in data:
        raise AccessConfigError(f"{where}: actions is required")
    labels = data.get("match_labels") or {}
    if not isinstance(labels, Mapping) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in labels.items()
    ):
        raise AccessConfigError(f"{where}: match_labels must be a table of string values")
    return Rule(
        id=rule_id,
        description=_optional_string(data.get("description"), where=where, name="description"),
        effect=effect,
        subjects=_string_list(data.get("subjects"), where=where, name="subjects"),
        groups=_string_list(data.get("groups"), where=where, name="groups"),
        actions=_string_list(data.get("actions"), where=where, name="actions"),
        agents=_string_list(data.get("agents"), where=where, name="agents"),
        roles=_string_list(data.get("roles"), where=where, name="roles"),
        match_labels=dict(labels),
    )


def validate_access_config(config: AccessConfig) -> None:
    """Raise AccessConfigError with MobKit's message for the first problem found (§2.3)."""
    # The anti-lockout invariant: an enabled config must leave someone able to fix it.
    if config.enabled and all(not admin.strip() for admin in config.admins):
        raise AccessConfigError("access control cannot be enabled without at least one admin subject")
    seen: set[str] = set()
    for rule in config.rules:
        if not rule.id.strip():
            raise AccessConfigError("access rule id must not be empty")
        if rule.id in seen:
            raise AccessConfigError(f"duplicate access rule id: {rule.id}")
        seen.add(rule.id)
        if not rule.actions:
            raise AccessConfigError(f"access rule {rule.id}: actions must not be empty")
        for pattern in rule.actions:
            if not action_pattern_is_known(pattern):
                raise AccessConfigError(f"access rule {rule.id}: unknown action {_quoted(pattern)}")
        for group in rule.groups:
            if group not in config.groups:
                raise AccessConfigError(f"access rule {rule.id}: unknown group {_quoted(group)}")


def parse_access_config(data: Mapping[str, Any]) -> AccessConfig:
    """Build a validated AccessConfig from access.toml's shape (or the same shape as JSON).

    Unknown keys are ignored, as MobKit's deserializer ignores them.
    """
    if not isinstance(data, Mapping):
        raise AccessConfigError("access config must be a table")
    enabled = data.get("enabled", False)
    if not isinstance(enabled, bool):
        raise AccessConfigError("access config: enabled must be true or false")
    groups = data.get("groups") or {}
    if not isinstance(groups, Mapping):
        raise AccessConfigError("access config: groups must be a table of [groups.<name>] tables")
    rules = data.get("rules") or []
    if not isinstance(rules, list):
        raise AccessConfigError("access config: rules must be an array of [[rules]] tables")
    config = AccessConfig(
        enabled=enabled,
        admins=_string_list(data.get("admins"), where="access config", name="admins"),
        groups={name: _parse_group(name, group) for name, group in groups.items()},
        rules=tuple(_parse_rule(position, rule) for position, rule in enumerate(rules, start=1)),
    )
    validate_access_config(config)
    return config


def normalize_for_memory_actions(config: AccessConfig) -> tuple[AccessConfig, bool]:
    """MobKit's migration compat (§2.3): a memory-naive config lets reading memory ride `agent.view`.

    Applies only when no rule action has a `memory` segment (`*` and `agent.*` do not count). Every
    rule, allow or deny, whose actions reach `agent.view` but not yet `agent.memory.read` gains it.
    Returns the config to use and whether anything changed; the caller logs, and the operator's
    file is never rewritten (the console is read-only).
    """
    if any(_pattern_mentions_memory(pattern) for rule in config.rules for pattern in rule.actions):
        return config, False
    changed = False
    rules = []
    for rule in config.rules:
        reaches_view = any(action_matches(p, "agent.view") for p in rule.actions)
        reaches_read = any(action_matches(p, "agent.memory.read") for p in rule.actions)
        if reaches_view and not reaches_read:
            rule = replace(rule, actions=(*rule.actions, "agent.memory.read"))
            changed = True
        rules.append(rule)
    return replace(config, rules=tuple(rules)), changed


# --- evaluation ------------------------------------------------------------------------------


def groups_for_subject(config: AccessConfig, subject: str | None) -> frozenset[str]:
    if subject is None:
        return frozenset()
    return frozenset(name for name, group in config.groups.items() if subject in group.members)


def is_admin(config: AccessConfig, subject: str | None) -> bool:
    """Admin standing is an exact, non-blank subject match in `admins` (§2.1)."""
    return subject is not None and bool(subject.strip()) and subject in config.admins


def _subject_matches(rule: Rule, principal: Principal) -> bool:
    if not rule.subjects and not rule.groups:
        return True  # matches everyone, anonymous callers included
    # `"*"` means any *authenticated* subject: it never lets an anonymous caller in.
    if principal.subject is not None and ("*" in rule.subjects or principal.subject in rule.subjects):
        return True
    return any(group in principal.groups for group in rule.groups)


def _resource_matches(rule: Rule, resource: Resource | None) -> bool:
    if not rule.is_scoped:
        return True
    if resource is None or not resource.is_present:
        return False
    if rule.agents and not any(
        candidate == "*" or candidate in (resource.identity, resource.agent_id)
        for candidate in rule.agents
    ):
        return False
    if rule.roles and (
        resource.role is None or not any(c == "*" or c == resource.role for c in rule.roles)
    ):
        return False
    if rule.match_labels and (
        resource.labels is None
        or any(resource.labels.get(key) != value for key, value in rule.match_labels.items())
    ):
        return False
    return True


def _rule_reaches(rule: Rule, principal: Principal, action: str) -> bool:
    return any(action_matches(p, action) for p in rule.actions) and _subject_matches(rule, principal)


@dataclass(frozen=True)
class RuleVerdict:
    """What one rule did in one check: whether it matched, and if not, the first reason it did not."""

    rule: Rule
    why_not: str  # "" when the rule matched

    @property
    def matched(self) -> bool:
        return not self.why_not


# Why a rule did not count, in MobKit's order of asking (plain constants: every check pays for them).
NOT_THE_ACTION = "its actions do not name this action"
NOT_THE_SUBJECT = "its subjects and groups do not include this subject"
NO_AGENT = "it is scoped to agents, roles or labels, and this check names no agent"
NOT_THE_AGENT = "its agents, roles or labels do not select this agent (roles and labels are unknown here)"


@dataclass(frozen=True)
class Explanation:
    """One check's decision with its evidence (docs/access.md §2.9).

    ``matched`` lists every rule whose action, subject and resource all matched; ``decisive`` the
    ones that decided: every matching deny when one matched (deny overrides), else every matching
    allow. Both are empty when the config is disabled, and ``decisive`` when the subject is an
    admin (``basis``).
    """

    allowed: bool
    reason: str
    basis: Literal["disabled", "admin", "deny", "allow", "no_rule"]
    decisive: tuple[str, ...]
    matched: tuple[str, ...]
    rules: tuple[Rule, ...] = ()
    why_not: tuple[str, ...] = ()  # per rule of ``rules``, "" for a rule that matched

    @property
    def decision(self) -> Decision:
        return Decision(self.allowed, self.reason)

    @property
    def verdicts(self) -> tuple[RuleVerdict, ...]:
        return tuple(RuleVerdict(rule, why) for rule, why in zip(self.rules, self.why_not))


def _why_not(rule: Rule, principal: Principal, action: str, resource: Resource | None) -> str:
    """The first reason ``rule`` does not count for this check; "" when it matches."""
    if not any(action_matches(p, action) for p in rule.actions):
        return NOT_THE_ACTION
    if not _subject_matches(rule, principal):
        return NOT_THE_SUBJECT
    if not _resource_matches(rule, resource):
        return NO_AGENT if resource is None or not resource.is_present else NOT_THE_AGENT
    return ""


def explain(config: AccessConfig, principal: Principal, action: str, resource: Resource | None) -> Explanation:
    """One check, in MobKit's order (disabled, admin, any deny, any allow, else deny: §2.3), with
    every rule's part in it. ``evaluate`` is this decision without the evidence."""
    if not config.enabled:
        return Explanation(True, "access control is disabled", "disabled", (), ())
    rules = config.rules
    why_not = tuple(_why_not(rule, principal, action, resource) for rule in rules)
    matched = tuple(rule for rule, why in zip(rules, why_not) if not why)
    matched_ids = tuple(rule.id for rule in matched)
    if is_admin(config, principal.subject):
        return Explanation(True, "admin", "admin", (), matched_ids, rules, why_not)
    # Deny overrides allow, whatever the rule order.
    denies = tuple(rule.id for rule in matched if rule.effect == "deny")
    if denies:
        return Explanation(False, f"denied by rule {denies[0]}", "deny", denies, matched_ids, rules, why_not)
    if matched:
        return Explanation(True, f"allowed by rule {matched[0].id}", "allow", matched_ids, matched_ids, rules, why_not)
    return Explanation(False, f"no rule allows {action}", "no_rule", (), (), rules, why_not)


def evaluate(
    config: AccessConfig, principal: Principal, action: str, resource: Resource | None
) -> Decision:
    """One check, in MobKit's order: disabled, admin, any deny, any allow, else deny (§2.3)."""
    return explain(config, principal, action, resource).decision


def may_perform_anywhere(config: AccessConfig, principal: Principal, action: str) -> bool:
    """The coarse affordance check (§2.3): could this principal do `action` to anything at all?

    Ignores resource selectors and deny rules; per-resource checks still decide each row.
    """
    if not config.enabled or is_admin(config, principal.subject):
        return True
    return any(
        rule.effect == "allow" and _rule_reaches(rule, principal, action) for rule in config.rules
    )
