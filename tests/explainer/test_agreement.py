"""The explainer answers as the console acts (docs/access.md §2.9): for every caller posture of the
access fixtures (tests/support/postures.py ``CALLERS``) and every record, identity, mob, operator
scope and realm-wide gate of the RPC world, explain.json's ``allowed`` is what the real page,
JSON-RPC method and event socket do for that subject."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth.models import User
from django.test import Client

from access.caller import Caller, access_for
from mobkit_console.explainer.selectors import Question, access_map
from tests.support.clients import signed_in_client, user_with_subject
from tests.support.postures import CALLERS, LEAD, ROOT, SCOUT, use_caller_posture
from tests.support.rpc import PANEL, call
from tests.support.sockets import INGEST_TOKEN, envelope, ingest, open_socket, receive_events, token_for

POSTURES = list(CALLERS)
EXPLAINER = "explainer-root@example.test"  # a console admin: may explain under every posture, "open" included


def _explainer() -> Client:
    user = User.objects.filter(username=EXPLAINER).first() or user_with_subject(EXPLAINER)
    user.is_superuser = True
    user.save()
    return signed_in_client(user)


def explained(explainer: Client, subject: str, action: str, **resource: str) -> bool:
    response = explainer.get("/console/access/explain.json", {"subject": subject, "action": action, **resource})
    assert response.status_code == 200, response.content
    return response.json()["allowed"]


def answered(reply) -> bool:
    """A JSON-RPC reply: True for a result, False for -32030; anything else is a test failure."""
    if "error" in reply.body:
        assert reply.body["error"]["code"] == -32030, reply.body
        return False
    return True


@pytest.mark.django_db
@pytest.mark.parametrize("name", POSTURES)
def test_every_record_and_gate_is_explained_as_the_page_and_rpc_decide(client, world, settings, tmp_path, signed_in, name):
    subject = use_caller_posture(settings, tmp_path, name)
    signed_in(subject)
    explainer = _explainer()

    for key, row in world.named.items():
        explanation = explained(explainer, subject, "agent.memory.read", memory_id=row.id, realm=row.realm)
        rpc = answered(call(client, PANEL + "record", {"memory_id": row.id, "realm": row.realm}))
        page = client.get(f"/console/memory/records/{row.id}/", {"realm": row.realm}).status_code
        assert (explanation, rpc, page) in ((True, True, 200), (False, False, 403)), (name, key)

    for identity in (SCOUT, LEAD):
        chain = explained(explainer, subject, "agent.memory.read", identity=identity)
        assert chain is answered(call(client, PANEL + "records", {"identity": identity})), (name, identity)
        if name == "open":  # no access.toml: preview answers -32004, and everything is allowed
            continue
        single = {action: call(explainer, "mobkit/access/preview",
                               {"subject": subject, "action": action, "identity": identity}).result["allowed"]
                  for action in ("agent.view", "agent.memory.read", "agent.send")}
        # An identity's memory needs both grants (docs/access.md §2.4); any other action is one check.
        assert chain is (single["agent.memory.read"] and single["agent.view"]), (name, identity)
        for action in ("agent.view", "agent.send"):
            assert explained(explainer, subject, action, identity=identity) is single[action], (name, action, identity)

    gates = [
        ({"mob": "ops"}, "mob.memory.read", "records", {"scope": "mob"}),
        ({"operator": "ops"}, "operator.memory.read", "records", {"scope": "operator"}),
        ({}, "memory.quarantine.review", "quarantine", {}),
        ({"realm": "default"}, "agent.memory.read", "dreams", {}),
        ({"realm": "default"}, "agent.memory.read", "overview", {}),
    ]
    for resource, action, method, params in gates:
        explanation = explained(explainer, subject, action, **resource)
        assert explanation is answered(call(client, PANEL + method, params)), (name, method, params)
    review_page = client.get("/console/memory/quarantine/").content.decode()
    assert ("No grant" in review_page or "no grant" in review_page) is not explained(
        explainer, subject, "memory.quarantine.review")

    # The access map's methods are mobkit/capabilities' list for that subject.
    listed = call(client, "mobkit/capabilities").result["methods"]
    mapped = access_map(access=access_for(Caller(subject=EXPLAINER, console_admin=True)),
                        question=Question(subject=subject, groups=frozenset(), action="agent.view"))
    assert mapped.methods == listed, name


def _remembered(identity: str, record_id: str) -> dict:
    return envelope(identity, "memory.record.remembered", identity=identity, record_id=record_id,
                    scope_kind="identity", scope_key=identity)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("name", POSTURES)
async def test_the_event_socket_delivers_an_agents_memory_events_exactly_when_explained(world, settings, tmp_path, name):
    settings.MOBKIT_INGEST_TOKEN = INGEST_TOKEN
    await get_channel_layer().flush()
    subject = use_caller_posture(settings, tmp_path, name)
    explainer = await sync_to_async(_explainer)()
    expected = {identity: await sync_to_async(explained)(explainer, subject, "agent.memory.read", identity=identity)
                for identity in (SCOUT, LEAD)}
    socket = await open_socket("/ws/console/events/", token=await token_for(subject), query="after=console-evt-0")
    _, sent = await ingest([_remembered(SCOUT, "mem-scout-x"), _remembered(LEAD, "mem-lead-x")])
    received = {frame["event"]["event_id"] for frame in await receive_events(socket)}
    await socket.disconnect()
    delivered = {identity: event_id in received for identity, event_id in zip((SCOUT, LEAD), sent["event_ids"])}
    assert delivered == expected, name
