"""MobKit's illustrative access postures (docs/access.md §2.6) as access.toml text.

Shared by the access-engine tests and the RPC tests, so both judge the same files.
"""

from __future__ import annotations

ROOT = "root@example.test"
REVIEWER = "reviewer@example.test"
SCOUT = "identity:scout"

HEADER = f"""
enabled = true
admins = ["{ROOT}"]

[groups.reviewers]
description = "Quarantine reviewers"
members = ["{REVIEWER}"]
"""
READS = """
[[rules]]
id = "everyone-reads"
actions = ["agent.view", "mob.observe", "agent.memory.read", "mob.memory.read", "operator.memory.read"]
"""
REVIEWS = """
[[rules]]
id = "reviewers-review"
description = "Only reviewers see the quarantine queue"
groups = ["reviewers"]
actions = ["memory.*"]
"""

POSTURES = {
    "reader": HEADER + READS,
    "partial": HEADER
    + """
[[rules]]
id = "everyone-reads-but-operator"
actions = ["agent.view", "mob.observe", "agent.memory.read", "mob.memory.read"]
""",
    "scoped": HEADER
    + f"""
[[rules]]
id = "scout-only"
subjects = ["*"]
actions = ["agent.view", "agent.memory.read"]
agents = ["{SCOUT}"]
""",
    "none": HEADER
    + """
[[rules]]
id = "see-agents"
actions = ["agent.view", "mob.observe"]

[[rules]]
id = "no-memory"
effect = "deny"
actions = ["agent.memory.read", "mob.memory.read", "operator.memory.read", "memory.quarantine.review"]
""",
    "reviewer": HEADER + READS + REVIEWS,
}
