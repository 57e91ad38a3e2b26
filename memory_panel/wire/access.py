"""MobKit's access RPC shapes, written out field by field (docs/access.md §2.6).

``mobkit/access/get`` returns the config in force as MobKit's JSON form of ``access.toml``;
``mobkit/access/preview`` takes ``subject``, ``action`` and an optional ``identity``. What goes on
the wire is decided here alone, as ``results.py`` does for the panel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from access.engine import ACCESS_ACTIONS, AccessConfig, Group, Rule
from memory_panel.errors import InvalidParams
from memory_panel.wire.params import param_str


def _group_json(group: Group) -> dict[str, Any]:
    out: dict[str, Any] = {"members": list(group.members)}
    if group.description is not None:
        out["description"] = group.description
    return out


def _rule_json(rule: Rule) -> dict[str, Any]:
    out: dict[str, Any] = {"id": rule.id}
    if rule.description is not None:
        out["description"] = rule.description
    out |= {
        "effect": rule.effect,
        "subjects": list(rule.subjects),
        "groups": list(rule.groups),
        "actions": list(rule.actions),
        "agents": list(rule.agents),
        "roles": list(rule.roles),
        "match_labels": dict(rule.match_labels),
    }
    return out


def access_config_json(config: AccessConfig) -> dict[str, Any]:
    """``{enabled, admins, groups: {name: {description?, members}}, rules: [Rule]}`` (§2.3)."""
    return {
        "enabled": config.enabled,
        "admins": list(config.admins),
        "groups": {name: _group_json(group) for name, group in config.groups.items()},
        "rules": [_rule_json(rule) for rule in config.rules],
    }


def parse_action(raw: Any, *, name: str = "action") -> str:
    """A required action of the 24 (§2.2); InvalidParams naming the field otherwise."""
    action = param_str({name: raw}, name)
    if action is None:
        raise InvalidParams(f"{name} is required")
    if action not in ACCESS_ACTIONS:
        raise InvalidParams(f"unknown {name} '{action}'")
    return action


@dataclass(frozen=True)
class PreviewParams:
    subject: str | None  # None: an anonymous caller
    action: str
    identity: str | None  # None: a resource-less check


def preview_params(params: dict[str, Any]) -> PreviewParams:
    """``subject`` (required; null previews an anonymous caller), ``action``, optional ``identity``."""
    if "subject" not in params:
        raise InvalidParams("subject is required")
    subject = param_str(params, "subject")
    if params["subject"] is not None and subject is None:
        raise InvalidParams("subject must not be empty (null previews an anonymous caller)")
    return PreviewParams(subject=subject, action=parse_action(params.get("action")), identity=param_str(params, "identity"))


def preview_json(
    params: PreviewParams, *, allowed: bool, reason: str, groups: list[str], is_admin: bool
) -> dict[str, Any]:
    """``{subject, action, identity, allowed, reason, groups, is_admin}`` (§2.6)."""
    return {
        "subject": params.subject,
        "action": params.action,
        "identity": params.identity,
        "allowed": allowed,
        "reason": reason,
        "groups": groups,
        "is_admin": is_admin,
    }
