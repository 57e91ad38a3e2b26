"""The single-process channel layer: a group send still reaches every member, a full member is
skipped without costing the others their message, and expired messages and members still go."""

from __future__ import annotations

from mobkit_console.timeline.layers import SWEEP_INTERVAL_S, TimelineInMemoryChannelLayer


async def test_group_send_reaches_every_member_with_its_own_copy() -> None:
    layer = TimelineInMemoryChannelLayer()
    names = [await layer.new_channel() for _ in range(3)]
    for name in names:
        await layer.group_add("memory-timeline", name)

    await layer.group_send("memory-timeline", {"type": "timeline.event", "seq": 1, "tags": ["a"]})

    received = [await layer.receive(name) for name in names]
    assert received == [{"type": "timeline.event", "seq": 1, "tags": ["a"]}] * 3
    received[0]["tags"].append("changed")  # a consumer mutating its message leaves the others' alone
    assert received[1]["tags"] == ["a"]


async def test_a_full_member_is_skipped_and_the_rest_still_receive() -> None:
    layer = TimelineInMemoryChannelLayer(capacity=1)
    slow, fast = await layer.new_channel(), await layer.new_channel()
    for name in (slow, fast):
        await layer.group_add("memory-timeline", name)

    await layer.group_send("memory-timeline", {"type": "timeline.event", "seq": 1})
    assert await layer.receive(fast) == {"type": "timeline.event", "seq": 1}
    await layer.group_send("memory-timeline", {"type": "timeline.event", "seq": 2})  # slow is full

    assert await layer.receive(fast) == {"type": "timeline.event", "seq": 2}
    assert await layer.receive(slow) == {"type": "timeline.event", "seq": 1}


async def test_expired_messages_and_their_members_are_still_swept() -> None:
    layer = TimelineInMemoryChannelLayer(expiry=0)  # every message is expired as soon as it is queued
    gone, live = await layer.new_channel(), await layer.new_channel()
    for name in (gone, live):
        await layer.group_add("memory-timeline", name)
    await layer.group_send("memory-timeline", {"type": "timeline.event", "seq": 1})
    assert await layer.receive(live) == {"type": "timeline.event", "seq": 1}  # swept at most a second late

    layer._swept_at -= SWEEP_INTERVAL_S  # a second on: the next send sweeps
    await layer.group_send("memory-timeline", {"type": "timeline.event", "seq": 2})

    assert gone not in layer.groups["memory-timeline"]  # its message expired unread: dropped from the group
    assert await layer.receive(live) == {"type": "timeline.event", "seq": 2}
