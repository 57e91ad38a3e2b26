"""memory_panel/wire/access.py: the access methods' params, each bad input naming its field, and the
config's JSON shape (docs/access.md §2.3, §2.6)."""

from __future__ import annotations

import pytest

from access.engine import AccessConfig, Group, Rule
from memory_panel.errors import InvalidParams
from memory_panel.wire.access import PreviewParams, access_config_json, preview_params


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"subject": "a@x", "action": "agent.view"}, PreviewParams("a@x", "agent.view", None)),
        ({"subject": " a@x ", "action": " agent.view ", "identity": " identity:scout "},
         PreviewParams("a@x", "agent.view", "identity:scout")),
        ({"subject": None, "action": "access.admin", "identity": None}, PreviewParams(None, "access.admin", None)),
        ({"subject": "a@x", "action": "mob.observe", "identity": ""}, PreviewParams("a@x", "mob.observe", None)),
    ],
)
def test_preview_params(params, expected):
    assert preview_params(params) == expected


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "subject is required"),
        ({"action": "agent.view"}, "subject is required"),
        ({"subject": "  ", "action": "agent.view"}, "subject must not be empty (null previews an anonymous caller)"),
        ({"subject": False, "action": "agent.view"}, "subject must be a string"),
        ({"subject": "a@x"}, "action is required"),
        ({"subject": "a@x", "action": None}, "action is required"),
        ({"subject": "a@x", "action": 3}, "action must be a string"),
        ({"subject": "a@x", "action": "*"}, "unknown action '*'"),
        ({"subject": "a@x", "action": "topology.view"}, "unknown action 'topology.view'"),
        ({"subject": "a@x", "action": "agent.view", "identity": 1}, "identity must be a string"),
    ],
)
def test_bad_preview_params_name_the_field(params, message):
    with pytest.raises(InvalidParams) as raised:
        preview_params(params)
    assert raised.value.message == f"Invalid params: {message}"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (AccessConfig(), {"enabled": False, "admins": [], "groups": {}, "rules": []}),
        (
            AccessConfig(
                enabled=True,
                admins=("root@x",),
                groups={"ops": Group(members=("a@x",)), "rev": Group(members=(), description="Reviewers")},
                rules=(Rule(id="r", description="why", effect="deny", actions=("agent.*",), agents=("identity:a",),
                            match_labels={"org": "pay"}),),
            ),
            {
                "enabled": True,
                "admins": ["root@x"],
                "groups": {"ops": {"members": ["a@x"]}, "rev": {"members": [], "description": "Reviewers"}},
                "rules": [{"id": "r", "description": "why", "effect": "deny", "subjects": [], "groups": [],
                           "actions": ["agent.*"], "agents": ["identity:a"], "roles": [],
                           "match_labels": {"org": "pay"}}],
            },
        ),
    ],
)
def test_access_config_json(config, expected):
    assert access_config_json(config) == expected
