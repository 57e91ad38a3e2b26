"""MobKit's access methods over /console/rpc, wire-exact (docs/access.md §2.5, §2.6): ``get`` and
``preview`` for access readers, -32030 for anyone else, -32004 without an access.toml, the edit
methods never served, and ``mobkit/capabilities`` listing them only for those who may call them.
"""

from __future__ import annotations

import pytest

from tests.support.postures import AUDITOR, AUDITORS, IDP_GROUP_GATES, POSTURES, READER, REVIEWER, ROOT, SCOUT, USER
from tests.support.rpc import call, denied, invalid_params

pytestmark = pytest.mark.django_db

GET = "mobkit/access/get"
PREVIEW = "mobkit/access/preview"
EDITS = ("mobkit/access/set", "mobkit/access/enable", "mobkit/access/rules/upsert", "mobkit/access/rules/delete",
         "mobkit/access/groups/set", "mobkit/access/groups/delete")
UNAVAILABLE = {"code": -32004, "message": "access control is not configured on this runtime",
               "data": {"kind": "access_unavailable"}}


# (access.toml, subject, console admin, may call get/preview)
CALLERS = [
    (AUDITORS, ROOT, False, True),  # an admin
    (AUDITORS, AUDITOR, False, True),  # holds access.admin, no admin
    (AUDITORS, READER, True, True),  # a console admin whom the file grants nothing of the kind
    (AUDITORS, REVIEWER, False, False),
    (AUDITORS, USER, False, False),
    (None, USER, True, False),  # no access.toml: nothing to get, even for a console admin
]


@pytest.mark.parametrize(("text", "subject", "superuser", "may"), CALLERS)
def test_capabilities_list_the_access_methods_only_for_those_who_may_call_them(
    client, as_caller, text, subject, superuser, may
):
    as_caller(text, subject, superuser=superuser)
    methods = call(client, "mobkit/capabilities").result["methods"]
    assert {GET: GET in methods, PREVIEW: PREVIEW in methods} == {GET: may, PREVIEW: may}
    assert "mobkit/access/status" in methods
    assert not set(EDITS) & set(methods)


@pytest.mark.parametrize(("text", "subject", "superuser", "may"), CALLERS)
def test_get_answers_the_config_in_force_or_the_exact_error(client, as_caller, text, subject, superuser, may):
    as_caller(text, subject, superuser=superuser)
    reply = call(client, GET)
    assert reply.status == 200
    if text is None:
        assert reply.error == UNAVAILABLE
    elif not may:
        assert reply.error == denied("access.admin", None)
    else:
        status = call(client, "mobkit/access/status").result
        assert set(reply.result) == {"config", "revision"}
        assert reply.result["revision"] == status["revision"]


def test_get_is_the_files_json_shape_field_by_field(client, as_caller):
    as_caller(IDP_GROUP_GATES, ROOT)
    config = call(client, GET).result["config"]
    assert config["enabled"] is True and config["admins"] == [ROOT]
    assert config["groups"]["denied-ana"] == {"description": "Vouched for by the identity provider alone", "members": []}
    assert config["rules"][1] == {
        "id": "no-ana-for-denied-ana", "effect": "deny", "subjects": [], "groups": ["denied-ana"],
        "actions": ["agent.memory.read"], "agents": ["identity:ana"], "roles": [], "match_labels": {},
    }
    assert [rule["id"] for rule in config["rules"]] == ["carol-reads-all", "no-ana-for-denied-ana", "ana-readers-read-ana"]


def test_get_shows_the_memory_compat_rewrite_in_force(client, as_caller):
    # A memory-naive file reads memory wherever agent.view is granted (docs/access.md §2.3).
    as_caller(f'enabled = true\nadmins = ["{ROOT}"]\n[[rules]]\nid = "see"\nactions = ["agent.view"]\n', ROOT)
    assert call(client, GET).result["config"]["rules"][0]["actions"] == ["agent.view", "agent.memory.read"]


@pytest.mark.parametrize("method", EDITS)
@pytest.mark.parametrize("text", [AUDITORS, None])
def test_the_console_never_writes_the_access_file(client, as_caller, method, text):
    as_caller(text, ROOT, superuser=True)
    params = {"config": {"enabled": False}, "enabled": False, "rule": {"id": "x", "actions": ["*"]}, "id": "x",
              "name": "g", "group": {"members": []}}
    assert call(client, method, params).error == {"code": -32601, "message": f"Method not found: {method}", "data": None}


# (posture, params, result fields or the -32602 message)
PREVIEWS = [
    ("scoped", {"subject": READER, "action": "agent.memory.read", "identity": SCOUT},
     {"allowed": True, "reason": "allowed by rule scout-only", "groups": [], "is_admin": False}),
    ("scoped", {"subject": READER, "action": "agent.memory.read", "identity": "identity:lead"},
     {"allowed": False, "reason": "no rule allows agent.memory.read", "groups": [], "is_admin": False}),
    ("scoped", {"subject": READER, "action": "agent.memory.read"},  # resource-less: a scoped rule never counts
     {"allowed": False, "reason": "no rule allows agent.memory.read", "groups": [], "is_admin": False}),
    ("scoped", {"subject": None, "action": "agent.view", "identity": SCOUT},  # subjects = ["*"] leaves anonymous out
     {"allowed": False, "reason": "no rule allows agent.view", "groups": [], "is_admin": False}),
    ("reviewer", {"subject": REVIEWER, "action": "memory.quarantine.review"},
     {"allowed": True, "reason": "allowed by rule reviewers-review", "groups": ["reviewers"], "is_admin": False}),
    ("none", {"subject": "never-signed-in@example.test", "action": "mob.memory.read"},
     {"allowed": False, "reason": "denied by rule no-memory", "groups": [], "is_admin": False}),
    ("none", {"subject": f"  {ROOT} ", "action": "operator.memory.read", "identity": " "},
     {"allowed": True, "reason": "admin", "groups": [], "is_admin": True}),
    ("reader", {"action": "agent.view"}, "subject is required"),
    ("reader", {"subject": "", "action": "agent.view"}, "subject must not be empty (null previews an anonymous caller)"),
    ("reader", {"subject": 7, "action": "agent.view"}, "subject must be a string"),
    ("reader", {"subject": READER}, "action is required"),
    ("reader", {"subject": READER, "action": "agent.fly"}, "unknown action 'agent.fly'"),
    ("reader", {"subject": READER, "action": "agent.*"}, "unknown action 'agent.*'"),
    ("reader", {"subject": READER, "action": "agent.view", "identity": ["x"]}, "identity must be a string"),
]


@pytest.mark.parametrize(("posture", "params", "want"), PREVIEWS)
def test_preview(client, as_caller, posture, params, want):
    as_caller(POSTURES[posture], ROOT)
    reply = call(client, PREVIEW, params)
    assert reply.status == 200
    if isinstance(want, str):
        assert reply.error == invalid_params(want)
        return
    subject = params["subject"].strip() if params["subject"] else None
    identity = (params.get("identity") or "").strip() or None
    assert reply.result == {"subject": subject, "action": params["action"], "identity": identity, **want}


def test_preview_is_refused_before_its_params_are_read(client, as_caller):
    as_caller(POSTURES["reader"], USER)
    assert call(client, PREVIEW, {"action": "agent.fly"}).error == denied("access.admin", None)
